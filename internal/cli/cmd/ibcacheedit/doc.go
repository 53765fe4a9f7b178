// Package ibcacheedit is the ibcacheedit command: GUIDs rewritten in an
// ibnetdiscover cache file.
package ibcacheedit
