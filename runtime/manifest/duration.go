package manifest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseDuration reads a duration in Go syntax ("1m30s", "250ms") extended
// with the day and week suffixes CCM accepts: "1d", "2w", "1d12h". A day is
// 24h and a week 7d (no calendar or DST awareness, as in CCM).
func ParseDuration(s string) (time.Duration, error) {
	orig := s
	if s == "" {
		return 0, fmt.Errorf("%w: empty duration; write one such as 30s, 5m or 1d", ErrInvalid)
	}
	if !strings.ContainsAny(s, "dw") {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%w: duration %q: use a number and unit such as 30s, 5m, 2h or 1d", ErrInvalid, orig)
		}
		return d, nil
	}
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		s = s[1:]
	}
	var total float64 // nanoseconds; float so that overflow is detectable
	for s != "" {
		i := 0
		for i < len(s) && (s[i] == '.' || (s[i] >= '0' && s[i] <= '9')) {
			i++
		}
		j := i
		for j < len(s) && s[j] != '.' && (s[j] < '0' || s[j] > '9') {
			j++
		}
		num, unit := s[:i], s[i:j]
		s = s[j:]
		if num == "" || unit == "" {
			return 0, fmt.Errorf("%w: duration %q: use a number and unit such as 30s, 5m, 2h or 1d", ErrInvalid, orig)
		}
		var scale float64
		switch unit {
		case "d":
			scale = float64(24 * time.Hour)
		case "w":
			scale = float64(7 * 24 * time.Hour)
		default:
			d, err := time.ParseDuration(num + unit)
			if err != nil {
				return 0, fmt.Errorf("%w: duration %q: unknown unit %q; use ns, us, ms, s, m, h, d or w", ErrInvalid, orig, unit)
			}
			total += float64(d)
			continue
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: duration %q: bad number %q", ErrInvalid, orig, num)
		}
		total += f * scale
	}
	if total > math.MaxInt64 {
		return 0, fmt.Errorf("%w: duration %q is too long (over 290 years)", ErrInvalid, orig)
	}
	if neg {
		total = -total
	}
	return time.Duration(total), nil
}
