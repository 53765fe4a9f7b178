package query

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/nodename"
)

func TestParseTargetOrName(t *testing.T) {
	for s, want := range map[string]endport.Kind{
		"leaf01": endport.ByName, "hca one": endport.ByName, "12": endport.ByLID, "0,1": endport.ByDRPath,
	} {
		got, err := endport.ParseTargetOrName(s, endport.TypeFlags{})
		if err != nil || got.Kind != want {
			t.Errorf("%q: %v %v, want %v", s, got.Kind, err, want)
		}
	}
	for _, s := range []string{"1x", "0,x", ""} {
		if _, err := endport.ParseTargetOrName(s, endport.TypeFlags{}); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
	if _, err := endport.ParseTargetOrName("leaf01", endport.TypeFlags{LID: true}); err == nil {
		t.Error("-L leaf01 parsed as a name")
	}
}

// guidAt reads the node GUID at a directed route.
func guidAt(t *testing.T, c *Client, path ...byte) uint64 {
	t.Helper()
	var ni mad.NodeInfo
	if err := c.Get(context.Background(), DR(path), 0, nil, &ni); err != nil {
		t.Fatal(err)
	}
	return uint64(ni.NodeGUID)
}

func TestNamesResolveThroughTheSA(t *testing.T) {
	c := client(t, Options{})
	ctx := context.Background()
	sw1 := guidAt(t, c, 0, 1)
	m, _, err := nodename.Parse(strings.NewReader(fmt.Sprintf("0x%016x leaf01\n", sw1)))
	if err != nil {
		t.Fatal(err)
	}
	c.opts.Names = m
	for _, name := range []string{"leaf01", "hca one"} {
		d, err := c.SMPDest(ctx, endport.Target{Kind: endport.ByName, Name: name})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var ni mad.NodeInfo
		if err := c.Get(ctx, d, 0, nil, &ni); err != nil {
			t.Fatal(err)
		}
		want := sw1
		if name == "hca one" {
			want = guidAt(t, c, 0)
		}
		if uint64(ni.NodeGUID) != want {
			t.Errorf("%s went to LID %d, node 0x%x; want 0x%x", name, d.LID, ni.NodeGUID, want)
		}
	}
	_, err = c.GMPDest(ctx, endport.Target{Kind: endport.ByName, Name: "nosuchnode"})
	var nf *NameNotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("unknown name: %v", err)
	}
}

func TestAmbiguousNameListsTheCandidates(t *testing.T) {
	c := client(t, Options{})
	ctx := context.Background()
	fab, err := (&Source{}).Fabric(ctx, c, Walk{})
	if err != nil {
		t.Fatal(err)
	}
	hca1, sw1 := guidAt(t, c, 0), guidAt(t, c, 0, 1)
	m, _, err := nodename.Parse(strings.NewReader(fmt.Sprintf("0x%016x rack1\n0x%016x rack1\n", hca1, sw1)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.ResolveName(ctx, endport.Target{Kind: endport.ByName, Name: "rack1"}, m, fab)
	var amb *AmbiguousNameError
	if !errors.As(err, &amb) || len(amb.Candidates) != 2 {
		t.Fatalf("rack1 names two nodes: got %v", err)
	}
	for _, g := range []uint64{hca1, sw1} {
		if !strings.Contains(err.Error(), fmt.Sprintf("0x%016x", g)) {
			t.Errorf("the error does not list 0x%016x: %v", g, err)
		}
	}
	// The host part of a description matches too, in a fabric.
	got, err := c.ResolveName(ctx, endport.Target{Kind: endport.ByName, Name: "hca"}, nil, fab)
	if err != nil || got.Kind != endport.ByLID {
		t.Fatalf(`"hca" (host part of "hca one"): %+v %v`, got, err)
	}
}
