package ibfindnodesusing

import (
	"strings"
	"testing"
)

func TestCompressHosts(t *testing.T) {
	for in, want := range map[string]string{
		"":                                    "",
		"node0001 HCA-1":                      " node0001 HCA-1",
		"n1,n2,n3":                            " n1-3",
		"n1,n2,n3,n5":                         " n1-3 n5",
		"n3,n1,n2":                            " n1-3",
		"a,b":                                 " a b",
		"lx01,lx02,lx03,lx05,dev0,dev1,dev21": " dev0-1 dev21 lx01-03 lx05",
		"n10,n9,n11":                          " n9-11",
		"x,n1,n2":                             " n1-2 x",
		"n1,n1":                               " n1 n1",
		"h007,h008,h010":                      " h007-008 h010",
	} {
		var hosts []string
		if in != "" {
			hosts = strings.Split(in, ",")
		}
		if got := strings.Join(compressHosts(hosts), " "); got != want {
			t.Errorf("%q: got %q, want %q (the script's compress_hostlist)", in, got, want)
		}
	}
}
