package mad

import "testing"

// The SMP attributes carry the component mask bits of the SA records that
// embed them (GUIDInfoRecord: GUIDs at bits 4..11).
func TestCompMaskOfEmbeddedArray(t *testing.T) {
	d := &StructDesc{Name: "R", Fields: []FieldDesc{
		{Name: "LID", Count: 1, Width: 16, Stride: 16, CompMask: 1},
		{Name: "GUIDInfo", Offset: 64, Count: 1, Width: 512, Stride: 512, Hint: HintStruct, Struct: descGUIDInfo},
	}}
	for path, want := range map[string]uint64{"LID": 1, "GUIDInfo.GUID[2]": 1 << 6, "GUIDInfo.GUID": 0xff0} {
		if got, err := CompMask(d, path); err != nil || got != want {
			t.Errorf("CompMask(%s) = %#x, %v; want %#x", path, got, err, want)
		}
	}
	if got := CompMaskFields(d, 0x41); len(got) != 2 || got[0] != "LID" || got[1] != "GUIDInfo.GUID[2]" {
		t.Errorf("CompMaskFields: %q", got)
	}
}
