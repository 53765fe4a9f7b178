// Package procs decides how many CPUs a command's Go code runs on: one while
// it talks to the fabric, every CPU while it formats.
package procs
