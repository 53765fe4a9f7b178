package mad

import (
	"encoding/json"
	"testing"
)

// fuzzStruct is the body of every generated Fuzz target: decoding any input
// must not panic, must reject short input, and what it decodes must survive
// an encode/decode round trip; the printers must not panic either.
func fuzzStruct[T comparable, PT interface {
	*T
	Struct
}](f *testing.F) {
	var zero T
	size := PT(&zero).Desc().Size
	f.Add(make([]byte, size))
	ones := make([]byte, size)
	for i := range ones {
		ones[i] = 0xff
	}
	f.Add(ones)
	f.Add(ones[:size-1])
	for _, c := range captureSeeds[PT(&zero).Desc().Name] {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := PT(&zero).Desc()
		_ = DumpBytes(d, data) // any length
		var x T
		err := PT(&x).Unmarshal(data)
		if len(data) < size {
			if err == nil {
				t.Fatalf("Unmarshal of %d bytes (< %d) did not fail", len(data), size)
			}
			return
		}
		if err != nil {
			t.Fatalf("Unmarshal: %v", err)
		}
		b := Encode(PT(&x))
		var y T
		if err := PT(&y).Unmarshal(b); err != nil {
			t.Fatalf("Unmarshal(Marshal): %v", err)
		}
		if x != y {
			t.Fatalf("round trip changed the value:\n%+v\n%+v", x, y)
		}
		if want := maskReserved(d, data[:size]); string(b) != string(want) {
			t.Fatalf("Marshal(Unmarshal(b)) != b without reserved bits:\n%x\n%x", b, want)
		}
		_ = Dotted(PT(&x), &DottedOptions{ShowKeys: true, Groups: allGroups(d)})
		_ = Dump(PT(&x))
		js, err := json.Marshal(PT(&x))
		if err != nil || !json.Valid(js) {
			t.Fatalf("JSON: %v %s", err, js)
		}
	})
}

// captureSeeds holds attribute bytes from the capture files, per structure,
// filled by the golden tests' loader.
var captureSeeds = map[string][][]byte{}

// maskReserved returns b with every reserved bit (and every bit no field
// covers) cleared.
func maskReserved(d *StructDesc, b []byte) []byte {
	out := make([]byte, len(b))
	var walk func(d *StructDesc, base int)
	walk = func(d *StructDesc, base int) {
		for i := range d.Fields {
			f := &d.Fields[i]
			if f.Reserved {
				continue
			}
			for e := 0; e < f.Count; e++ {
				off := base + f.Offset + e*f.Stride
				if f.Hint == HintStruct {
					walk(f.Struct, off)
					continue
				}
				for bit := off; bit < off+f.Width; bit++ {
					putBits(out, bit, 1, getBits(b, bit, 1))
				}
			}
		}
	}
	walk(d, 0)
	return out
}

func allGroups(d *StructDesc) []string {
	var gs []string
	for _, f := range d.Fields {
		if f.Group != "" {
			gs = append(gs, f.Group)
		}
	}
	return gs
}
