// Package iblinkinfo is the iblinkinfo command: every link of the fabric,
// switch by switch.
package iblinkinfo
