package audit

import (
	"encoding/json"
	"strings"

	"github.com/supersessiond/supersessiond/internal/supersession"
)

// The channels an operator decides through: changed_by is
// "supersessiond:" + the channel (SPEC §5).
const (
	ChannelCLI     = "cli"
	ChannelConsole = "console"
	ChannelAPI     = "api"
)

// How an operator's name is known (metadata operator_source).
const (
	SourceToken  = "token"   // the name of the token the request carried
	SourceLogin  = "login"   // given at a console login with the shared admin token
	SourceOSUser = "os_user" // the CLI's operating-system user
	SourceFlag   = "flag"    // the CLI's --operator
)

// Operator is who the operator commands record as having decided: the
// channel, the operator's name and how it is known, and the session and
// request it came in.
type Operator struct {
	Channel   string
	Name      string
	Source    string
	SessionID string // the console session ("" for the CLI and bearer requests)
	RequestID string // one HTTP request, or one CLI invocation
}

// actor is how the operator is written: changed_by, actor_type,
// request_id, session_id, and the name in the metadata.
func (op Operator) actor() supersession.Actor {
	channel := op.Channel
	if channel == "" {
		channel = ChannelCLI
	}
	return supersession.Actor{ChangedBy: "supersessiond:" + channel, Type: "operator", RequestID: op.RequestID,
		SessionID: op.SessionID, Operator: op.Name, OperatorSource: op.Source}
}

// As returns the commands acting as op: every history row they write says
// who, through which channel, in which session and request.
func (o *Ops) As(op Operator) *Ops {
	c := *o
	c.actor = op.actor()
	return &c
}

// withOperator adds the operator's name to a history row's metadata.
func (o *Ops) withOperator(m map[string]any) string {
	if o.actor.Operator != "" {
		m["operator"], m["operator_source"] = o.actor.Operator, o.actor.OperatorSource
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// Who is who wrote a history row, as the queue shows a decision's author.
type Who struct {
	Channel        string `json:"channel"` // cli, console, api (or sweep, inline)
	Operator       string `json:"operator,omitempty"`
	OperatorSource string `json:"operator_source,omitempty"`
	SessionID      string `json:"session_id,omitempty"`
	RequestID      string `json:"request_id,omitempty"`
}

// who is the author the rows these commands write name.
func (o *Ops) who() *Who {
	a := o.actor
	return &Who{Channel: strings.TrimPrefix(a.ChangedBy, "supersessiond:"), Operator: a.Operator,
		OperatorSource: a.OperatorSource, SessionID: a.SessionID, RequestID: a.RequestID}
}

// Who is the author of a history row, from its columns and metadata.
func (e Entry) Who() *Who {
	var m struct {
		Operator       string `json:"operator"`
		OperatorSource string `json:"operator_source"`
	}
	_ = json.Unmarshal(e.Metadata, &m)
	return &Who{Channel: strings.TrimPrefix(e.ChangedBy, "supersessiond:"), Operator: m.Operator,
		OperatorSource: m.OperatorSource, SessionID: deref(e.SessionID), RequestID: deref(e.RequestID)}
}

// whoOf decodes the object the queue's SQL builds for a row (whoSQL).
func whoOf(raw JSONB) *Who {
	if len(raw) == 0 {
		return nil
	}
	var r struct {
		ChangedBy      string  `json:"changed_by"`
		Operator       *string `json:"operator"`
		OperatorSource *string `json:"operator_source"`
		SessionID      *string `json:"session_id"`
		RequestID      *string `json:"request_id"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return nil
	}
	return &Who{Channel: strings.TrimPrefix(r.ChangedBy, "supersessiond:"), Operator: deref(r.Operator),
		OperatorSource: deref(r.OperatorSource), SessionID: deref(r.SessionID), RequestID: deref(r.RequestID)}
}

// String is the author as one line: "alice (console)".
func (w *Who) String() string {
	if w == nil {
		return ""
	}
	if w.Operator == "" {
		return w.Channel
	}
	return w.Operator + " (" + w.Channel + ")"
}

// DecidedBy is who made the proposal what it is now: who undid it, applied
// it, or reviewed it (nil when nobody has).
func (p Proposal) DecidedBy() *Who {
	switch {
	case p.RevertedBy != nil && p.Status == StatusUndone:
		return p.RevertedBy
	case p.AppliedBy != nil && p.Status == StatusApplied:
		return p.AppliedBy
	case p.Review != nil:
		return p.Review.By
	}
	return nil
}
