package main

import (
	"fmt"
	"strconv"
	"time"
)

// parseDuration reads a Go duration ("90s", "1h30m") that may also use the
// fisk units d (24h) and w (7d): "1d", "2w3d", "1.5d".
func parseDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	var total time.Duration
	for rest := s; rest != ""; {
		i := 0
		for i < len(rest) && (rest[i] == '.' || rest[i] >= '0' && rest[i] <= '9') {
			i++
		}
		j := i
		for j < len(rest) && rest[j] != '.' && (rest[j] < '0' || rest[j] > '9') {
			j++
		}
		if i == 0 || j == i {
			return 0, fmt.Errorf("duration %q: each number needs a unit (ns, us, ms, s, m, h, d, w)", s)
		}
		num, unit := rest[:i], rest[i:j]
		rest = rest[j:]
		var part time.Duration
		switch unit {
		case "d", "w":
			f, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, fmt.Errorf("duration %q: %w", s, err)
			}
			day := 24 * time.Hour
			if unit == "w" {
				day *= 7
			}
			part = time.Duration(f * float64(day))
		default:
			d, err := time.ParseDuration(num + unit)
			if err != nil {
				return 0, fmt.Errorf("duration %q: %w", s, err)
			}
			part = d
		}
		total += part
	}
	return total, nil
}
