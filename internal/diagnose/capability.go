package diagnose

import (
	"fmt"

	"github.com/ibtool/ibtool/internal/health"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
)

// Links below what their ends can do, judged twice by health.CompareLink:
//
//   - by what both ends enable: a link trains to the best width and
//     speed both ends are enabled for (IBA 5.6.4.1), so a link below it
//     has a lane that did not train or a bad cable, through no choice of
//     the site: an error;
//   - by what both ends support (iblinkinfo's "Could be ..."): ends
//     enabled for less than they can do are a configuration, a warning,
//     and only where another link between ends that support as much runs
//     faster. The Supported bits alone say what a port's silicon claims,
//     not what its cables and its site let it run at: ibsim's ports all
//     claim 1X to 12X and SDR to QDR (NDR with extended speeds) and run
//     4X SDR, and a site that enables 4X EDR on HDR hardware everywhere
//     made a choice; reporting every link of such a fabric is the flood
//     that buries the link that came up 1X.

// capabilityCodes are the codes of capabilityRule.
var capabilityCodes = []CodeInfo{
	{"links.below_enabled_width", Error, "the link runs narrower than both ends are enabled for: a lane that did not train, or a bad cable"},
	{"links.below_enabled_speed", Error, "the link runs slower than both ends are enabled for: a lane or cable that cannot keep the speed"},
	{"links.below_supported_width", Warning, "both ends support a wider link, and other links between ends that support as much run wider; the ends are enabled for no more"},
	{"links.below_supported_speed", Warning, "both ends support a faster link, and other links between ends that support as much run faster; the ends are enabled for no more"},
}

// peerBest is, for each best width (lanes) and speed (rank) both ends
// of a link support, the best any link of the fabric between such ends
// runs at.
type peerBest struct {
	width map[int]int // supported lanes -> widest active lanes
	speed map[int]int // supported speed rank -> fastest active rank
}

// linkCapability is one link's width and speed against its ends', as
// the rule needs them.
type linkCapability struct {
	supported, enabled     health.Link
	lanes, supLanes        int // active and best supported
	speed, supSpeed        int // ranks (speedRank) of the active and best supported speeds
	speedText, supText     string
	enabledWidth           mad.LinkWidth
	enabledSpeed           string
	judgeWidth, judgeSpeed bool
}

func capabilityOf(l *link) linkCapability {
	local, remote := health.EndOfRate(l.a, l.arate), health.EndOfRate(l.b, l.brate)
	c := linkCapability{
		supported: health.CompareLink(local, &remote, health.Supported),
		enabled:   health.CompareLink(local, &remote, health.Enabled),
	}
	c.lanes = lanes(mad.WidthCompatName(l.ai.LinkWidthActive))
	c.supLanes = lanes(mad.WidthCompatName(mad.LinkWidth(c.supported.Width.Best)))
	c.enabledWidth = mad.LinkWidth(c.enabled.Width.Best)
	c.speedText, c.supText = l.arate.CompatSpeed(), c.supported.BestSpeed()
	c.speed, c.supSpeed = speedRank(c.speedText), speedRank(c.supText)
	c.enabledSpeed = c.enabled.BestSpeed()
	// A switch without port 0 has no capability mask: its speed is not
	// known ("???"), and neither is its width's meaning.
	c.judgeWidth = c.lanes > 0 && c.supLanes > 0 && l.arate.CI != nil
	// A speed beyond the best both support is judged on another kind of
	// speed than it runs at (the far end's capability mask not read):
	// not comparable.
	c.judgeSpeed = c.speed > 0 && c.supSpeed > 0 && c.speed <= c.supSpeed
	return c
}

// capabilityRule is the rule over the links ls: it knows what each kind
// of link runs at elsewhere in the fabric.
func capabilityRule(ls []*link) linkRule {
	caps := make(map[*link]linkCapability, len(ls))
	peers := peerBest{width: map[int]int{}, speed: map[int]int{}}
	for _, l := range ls {
		c := capabilityOf(l)
		caps[l] = c
		if c.judgeWidth {
			peers.width[c.supLanes] = max(peers.width[c.supLanes], c.lanes)
		}
		if c.judgeSpeed {
			peers.speed[c.supSpeed] = max(peers.speed[c.supSpeed], c.speed)
		}
	}
	return func(l *link, cfg *Config) []Finding {
		c := caps[l]
		var out []Finding
		add := func(code string, sev Severity, msg string, ev ...Field) {
			out = append(out, l.finding(Finding{Code: code, Severity: sev, Message: msg,
				Evidence: append(l.rateEvidence(), ev...)}, cfg.Names))
		}
		width := jsonv.WidthOf(l.ai.LinkWidthActive)
		supWidth := jsonv.WidthOf(mad.LinkWidth(c.supported.Width.Best))
		switch {
		case !c.judgeWidth:
		case c.enabled.Width.Below():
			add("links.below_enabled_width", Error,
				fmt.Sprintf("the link runs at %s, both ends are enabled for %s", width, jsonv.WidthOf(c.enabledWidth)),
				Field{"enabled_width", jsonv.WidthOf(c.enabledWidth)}, Field{"supported_width", supWidth})
		case c.lanes < peers.width[c.supLanes]:
			peer := jsonv.Width(fmt.Sprintf("%dX", peers.width[c.supLanes]))
			add("links.below_supported_width", Warning,
				fmt.Sprintf("the link runs at %s, both ends support %s and other such links run at %s; the ends are enabled for no more than %s",
					width, supWidth, peer, jsonv.WidthOf(c.enabledWidth)),
				Field{"enabled_width", jsonv.WidthOf(c.enabledWidth)}, Field{"supported_width", supWidth}, Field{"peers_width", peer})
		}
		switch {
		case !c.judgeSpeed:
		case c.enabled.SpeedBelow():
			add("links.below_enabled_speed", Error,
				fmt.Sprintf("the link runs at %s, both ends are enabled for %s", c.speedText, c.enabledSpeed),
				Field{"enabled_speed_text", c.enabledSpeed}, Field{"supported_speed_text", c.supText})
		case c.speed < peers.speed[c.supSpeed]:
			peer := speeds[peers.speed[c.supSpeed]-1]
			add("links.below_supported_speed", Warning,
				fmt.Sprintf("the link runs at %s, both ends support %s and other such links run at %s; the ends are enabled for no more than %s",
					c.speedText, c.supText, peer, c.enabledSpeed),
				Field{"enabled_speed_text", c.enabledSpeed}, Field{"supported_speed_text", c.supText}, Field{"peers_speed_text", peer})
		}
		return out
	}
}
