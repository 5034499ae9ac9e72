// Package bytesize reads the sizes kpipe's flags take ("500MB", "2GiB",
// "1048576"), so that the kpipe command and kpipe-cache-server read them
// alike.
//
// It imports nothing of kpipe; cmd/kpipe and cmd/kpipe-cache-server use
// it.
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads sizes such as "500MB", "2GiB" or "1048576": KiB, MiB, GiB
// and TiB (and K, M, G) are powers of 1024, KB, MB, GB and TB powers of
// 1000, B or no unit bytes; the case of the unit does not matter.
func Parse(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(strings.ToUpper(s), strings.ToUpper(u.suffix)) {
			s, mult = strings.TrimSpace(s[:len(s)-len(u.suffix)]), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("invalid size %q (use e.g. 500MB, 2GiB)", s)
	}
	return int64(f * float64(mult)), nil
}
