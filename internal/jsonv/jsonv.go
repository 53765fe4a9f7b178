// Package jsonv is the JSON vocabulary every ibtool command's --json
// follows (docs/json.md): the value types several commands share, with
// their JSON encoding, and Check, which applies the rules a program can
// check to any document.
//
// GUIDs and GIDs are internal/mad's GUID ("0x%016x") and GID (RFC 5952
// text); this package only adds what mad does not have.
package jsonv

import (
	"strconv"
	"strings"

	"github.com/ibtool/ibtool/internal/mad"
)

// NodeType is a node's type as JSON has it: "ca", "switch" or "router"
// (key node_type), never a number or another spelling.
type NodeType string

// The node types.
const (
	CA     NodeType = "ca"
	Switch NodeType = "switch"
	Router NodeType = "router"
)

// NodeTypeOf is the vocabulary's name of a NodeInfo NodeType; "" (left out
// with omitempty) for a value IBA does not define.
func NodeTypeOf(t mad.NodeType) NodeType {
	switch t {
	case mad.NodeTypeCA:
		return CA
	case mad.NodeTypeSwitch:
		return Switch
	case mad.NodeTypeRouter:
		return Router
	}
	return ""
}

// Width is a link width in IBA's spelling: "1X", "2X", "4X", "8X" or "12X"
// (keys width and *_width).
type Width string

// WidthOf is the Width of a PortInfo LinkWidthActive value (one bit); ""
// when the value is not one width.
func WidthOf(w mad.LinkWidth) Width {
	switch w {
	case mad.LinkWidth1X:
		return "1X"
	case mad.LinkWidth2X:
		return "2X"
	case mad.LinkWidth4X:
		return "4X"
	case mad.LinkWidth8X:
		return "8X"
	case mad.LinkWidth12X:
		return "12X"
	}
	return ""
}

// lanes is the number of lanes of a width, 0 if unknown.
func (w Width) lanes() int {
	switch w {
	case "1X", "2X", "4X", "8X", "12X":
		n, _ := strconv.Atoi(strings.TrimSuffix(string(w), "X"))
		return n
	}
	return 0
}

// speeds are the lane speeds by their IBA names (as ibnetdiscover prints
// them): the signalling rate of one lane (libibmad's "25.78125 Gbps"), and
// the per-lane rate in the names sysfs and the tools give a link ("4X QDR"
// is "40 Gb/sec", "4X FDR" "56 Gb/sec", "4X EDR" "100 Gb/sec"), in Gb/s.
// (A slice, not a map, which every start of the program would build.)
var speeds = []laneSpeed{
	{"SDR", 2.5, 2.5},
	{"DDR", 5, 5},
	{"QDR", 10, 10},
	{"FDR10", 10.3125, 10},
	{"FDR", 14.0625, 14},
	{"EDR", 25.78125, 25},
	{"HDR", 53.125, 50},
	{"NDR", 106.25, 100},
	{"XDR", 212.5, 200},
}

type laneSpeed struct {
	name          string
	lane, nominal float64
}

func speedNamed(name string) (laneSpeed, bool) {
	for _, s := range speeds {
		if s.name == name {
			return s, true
		}
	}
	return laneSpeed{}, false
}

// Rate is a link's width and speed, embedded in a port's JSON object (its
// fields become the port's):
//
//	"width": "4X", "lane_speed_gbps": 25.78125, "rate_gbps": 100,
//	"speed_text": "EDR", "rate_text": "4X EDR"
//
// lane_speed_gbps is the signalling rate of one lane (libibmad's
// "25.78125 Gbps"); rate_gbps the link's nominal rate, as sysfs and ibstat
// give it (width times 2.5, 5, 10, 10, 14, 25, 50, 100 or 200). Fields
// that are not known are left out.
type Rate struct {
	Width         Width   `json:"width,omitempty"`
	LaneSpeedGbps float64 `json:"lane_speed_gbps,omitempty"`
	RateGbps      float64 `json:"rate_gbps,omitempty"`
	SpeedText     string  `json:"speed_text,omitempty"`
	RateText      string  `json:"rate_text,omitempty"`
}

// RateOf is the Rate of a link of width w running at the lane speed named
// speed (mad.SpeedCompatName's names: "SDR" ... "XDR", "FDR10").
func RateOf(w Width, speed string) Rate {
	if w.lanes() == 0 {
		w = "" // unknown ("??")
	}
	r := Rate{Width: w}
	s, ok := speedNamed(speed)
	if !ok {
		return r
	}
	r.LaneSpeedGbps, r.SpeedText = s.lane, speed
	if n := w.lanes(); n > 0 {
		r.RateGbps = float64(n) * s.nominal
		r.RateText = string(w) + " " + speed
	}
	return r
}

// Route is how a target is reached (Target.Route).
type Route string

// The routes.
const (
	RouteLID      Route = "lid"      // LID routed
	RouteDR       Route = "dr"       // directed route from the local port
	RouteCombined Route = "combined" // LID routed to dr_slid, then directed
	RouteGID      Route = "gid"      // GMPs addressed by GID (RoCE)
)

// Target is the port a command sent its MADs to, the same object in every
// command (key target). LID is where the MADs went (for a GUID or GID
// target, the LID the SA gave); GUID, GID and Name are what the target
// was given as; Text is the C tool's text of it ("Lid 2", "DR path slid
// 0; dlid 0; 0,1").
type Target struct {
	Route  Route     `json:"route"`
	LID    uint16    `json:"lid,omitempty"`
	DRPath string    `json:"dr_path,omitempty"` // "0,1,3"
	DRSLID uint16    `json:"dr_slid,omitempty"`
	GUID   *mad.GUID `json:"guid,omitempty"`
	GID    *mad.GID  `json:"gid,omitempty"`
	Name   string    `json:"name,omitempty"`
	Text   string    `json:"text,omitempty"`
}

// LinkEnd is one end of a link: the remote side of a port, or either end
// of a link, the same object in every command. A switch's ports share its
// port GUID; lid is the port's (a switch's port 0 LID for its ports).
// ExternalPort is the front-panel number when chassis data gives one.
type LinkEnd struct {
	NodeGUID     mad.GUID `json:"node_guid"`
	NodeName     string   `json:"node_name,omitempty"`
	NodeType     NodeType `json:"node_type,omitempty"`
	Port         int      `json:"port"`
	ExternalPort int      `json:"external_port,omitempty"`
	PortGUID     mad.GUID `json:"port_guid,omitempty"`
	LID          uint16   `json:"lid,omitempty"`
}

// MaskNames is the <name>_names list of a capability mask: the texts of the
// flags set in v, from the mad enumeration named enum ("PortCapMask",
// "PortCapMask2", "PerfCapMask" ...), an empty list rather than null when
// none is. It panics on an unknown enumeration (a programming error).
func MaskNames(v uint64, enum string) []string {
	for _, e := range mad.Enums() {
		if e.Name == enum {
			names := e.MaskTexts(v)
			if names == nil {
				names = []string{}
			}
			return names
		}
	}
	panic("jsonv: no enumeration " + enum)
}

// PortState is a port's state and physical state, embedded in a port's
// JSON object: the PortInfo numbers, and libibmad's texts of them.
//
//	"state": 4, "state_text": "Active", "physical_state": 5, "physical_state_text": "LinkUp"
type PortState struct {
	State             uint8  `json:"state"`
	StateText         string `json:"state_text"`
	PhysicalState     uint8  `json:"physical_state"`
	PhysicalStateText string `json:"physical_state_text"`
}

// PortStateOf is the PortState of a PortInfo.
func PortStateOf(p *mad.PortInfo) *PortState {
	return &PortState{
		State: uint8(p.PortState), StateText: p.PortState.String(),
		PhysicalState: uint8(p.PortPhysicalState), PhysicalStateText: p.PortPhysicalState.String(),
	}
}
