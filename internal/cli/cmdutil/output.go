package cmdutil

// The output layer. A command parses its arguments, asks the query layer,
// and returns a result value; this file renders that value, as the
// infiniband-diags text or as --json, and reports the command's failure
// through the one failure path (Fail, ibexit.go).

import (
	"encoding/json"
	"io"
	"reflect"
)

// Result is what a command produces. Its JSON form is the value itself
// marshalled (the json tags are the schema, docs/json.md the vocabulary);
// WriteText writes the C tool's text, byte for byte.
type Result interface {
	WriteText(w io.Writer) error
}

// Finish is every command's last step. It renders res (text or JSON) and
// reports err. On failure the text output still shows what the command
// had before it failed, as the C tools print as they go; JSON is written
// only for a command that succeeded, or whose result carries its own
// per-item errors (err nil).
func Finish(env *Env, c *Common, tool string, res Result, err error) error {
	if !isNil(res) && (err == nil || !c.JSON) {
		var werr error
		if c.JSON {
			werr = WriteJSON(env.IO.Out, res)
		} else {
			werr = res.WriteText(env.IO.Out)
		}
		if err == nil {
			err = werr
		}
	}
	return Fail(env, c, tool, err)
}

// isNil reports whether res is nil, or a nil pointer in an interface (a
// run function's "return nil, err" through a typed result).
func isNil(res Result) bool {
	if res == nil {
		return true
	}
	v := reflect.ValueOf(res)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// WriteJSON writes v as indented JSON with a trailing newline: the --json
// output of every command.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteString writes a text built as a string.
func WriteString(w io.Writer, s string) error {
	_, err := io.WriteString(w, s)
	return err
}
