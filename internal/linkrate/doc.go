// Package linkrate is the width and speed texts of a port's link as the
// fabric commands print them, and its rate in the JSON vocabulary.
package linkrate
