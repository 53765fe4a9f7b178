package cache

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzDecode: any input decodes or fails with a one-line FormatError,
// never a panic; what decodes also encodes, and encoding is a fixed point
// (Encode(Decode(Encode(Decode(x)))) == Encode(Decode(x))).
//
//	go test ./internal/cache -run XXX -fuzz FuzzDecode -fuzztime 30s -fuzzminimizetime 2s
//
// (with the default minimisation time, a short run spends itself
// minimising the first new inputs of 2-3 KB).
func FuzzDecode(f *testing.F) {
	for _, name := range goldenCaches {
		f.Add(readGolden(f, name))
	}
	f.Add(encode(f, testFabric()))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		fab, err := Decode(bytes.NewReader(data))
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q (%T)", err, err)
			}
			return
		}
		var once bytes.Buffer
		if err := Encode(&once, fab); err != nil {
			t.Fatalf("decoded fabric does not encode: %v", err)
		}
		again, err := Decode(bytes.NewReader(once.Bytes()))
		if err != nil {
			t.Fatalf("re-encoded file does not decode: %v", err)
		}
		var twice bytes.Buffer
		if err := Encode(&twice, again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once.Bytes(), twice.Bytes()) {
			t.Fatal("encoding is not a fixed point")
		}
	})
}

// FuzzCompanion: any companion next to a cache loads or fails with one
// line, never a panic, and a failure leaves the fabric as the main file
// has it.
//
//	go test ./internal/cache -run XXX -fuzz FuzzCompanion -fuzztime 30s
func FuzzCompanion(f *testing.F) {
	fab := testFabric()
	main := encode(f, fab)
	c := makeCompanion(fab, main)
	if c == nil {
		c = &companion{}
	}
	c.WalkErrors = []companionWalkError{{DRPath: "0,3", What: "PortInfo port 2", Error: "no reply"}}
	f.Add(c.marshal())
	f.Add([]byte(`{"format": "ibtool-cache-companion", "version": 1}`))
	f.Add([]byte("null"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Decode(bytes.NewReader(main))
		if err != nil {
			t.Fatal(err)
		}
		before := len(g.Errors)
		if _, err := applyCompanion(g, main, data, "x.ibtool"); err != nil {
			if strings.Contains(err.Error(), "\n") || len(g.Errors) != before {
				t.Fatalf("error %q, %d walk errors after it", err, len(g.Errors))
			}
		}
	})
}
