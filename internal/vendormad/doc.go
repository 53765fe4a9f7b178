// Package vendormad is the vendor-class MADs (classes of vendor range 2,
// which carry an OUI) that ibping and ibsysstat send and answer.
package vendormad
