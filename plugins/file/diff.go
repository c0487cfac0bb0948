package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/ccm-dev/ccm/plugins/internal/udiff"
	"github.com/ccm-dev/ccm/sdk"
	"github.com/ccm-dev/ccm/sdk/abi"
)

const (
	// maxDiffBytes is the largest content shown as a diff; larger files are
	// summarised by size and digest.
	maxDiffBytes = 512 << 10
	// maxDiffEdits bounds the diff search: a change of more lines is
	// summarised instead.
	maxDiffEdits = 1000
	// hiddenDiff is what a show_diff: false resource reports.
	hiddenDiff = "content changed (diff hidden)"
)

// contentDiff shows how a write changes the file: a unified diff of the
// old and new contents, or a one-line summary when they cannot be shown
// (show_diff false, binary, too large, too many changed lines, unreadable).
// It is called only for a content change that the host asked to see, so a
// stable file never costs a read.
func contentDiff(h sdk.Host, req abi.Request, s spec, st abi.FSStatResponse, src string) string {
	if s.hideDiff || req.HideDiff {
		return hiddenDiff
	}
	oldName, newName := s.name, s.name
	var old []byte
	oldSize, oldSum := int64(0), ""
	if st.Type == "file" {
		oldSize, oldSum = st.Size, st.SHA256
		if st.Size <= maxDiffBytes {
			b, err := h.ReadFile(abi.FSReadRequest{Path: s.name, MaxBytes: maxDiffBytes})
			if err != nil {
				return fmt.Sprintf("content changed (diff not shown: reading %s: %v)", s.name, err)
			}
			old = b
		}
	} else {
		oldName = "/dev/null"
	}
	newContent := s.content
	if src != "" {
		b, err := h.ReadFile(abi.FSReadRequest{Path: src, MaxBytes: maxDiffBytes})
		var ce *abi.CallError
		if errors.As(err, &ce) && ce.Code == abi.CodeTooLarge {
			return fmt.Sprintf("content changed (source over %d KiB, diff not shown): %s → source %s", maxDiffBytes>>10,
				sizeSum(oldSize, oldSum, st.Type == "file"), src)
		}
		if err != nil {
			return fmt.Sprintf("content changed (diff not shown: reading source %s: %v)", src, err)
		}
		newContent = b
	}
	newSum := sha256.Sum256(newContent)
	summary := func(why string) string {
		return fmt.Sprintf("content changed (%s): %s → %s", why, sizeSum(oldSize, oldSum, st.Type == "file"),
			sizeSum(int64(len(newContent)), hex.EncodeToString(newSum[:]), true))
	}
	switch {
	case oldSize > maxDiffBytes || len(newContent) > maxDiffBytes:
		return summary(fmt.Sprintf("over %d KiB, diff not shown", maxDiffBytes>>10))
	case binary(old) || binary(newContent):
		return summary("binary")
	}
	d, ok := udiff.Unified(oldName, newName, old, newContent, maxDiffEdits)
	if !ok {
		return summary(fmt.Sprintf("more than %d changed lines, diff not shown", maxDiffEdits))
	}
	return d
}

// sizeSum names a content by size and sha256 prefix.
func sizeSum(size int64, sum string, exists bool) string {
	if !exists {
		return "absent"
	}
	if len(sum) > 12 {
		sum = sum[:12]
	}
	return fmt.Sprintf("%d bytes sha256:%s", size, sum)
}

// binary reports content a text diff cannot show: a NUL byte or invalid UTF-8.
func binary(b []byte) bool {
	return bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b)
}
