// Package ibidsverify is the ibidsverify command: zero and duplicate LIDs
// and GUIDs of the fabric.
package ibidsverify
