package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/supersessiond/supersessiond/internal/audit"
)

// ---- reads ----

func (c *Console) apiProposals(w http.ResponseWriter, r *http.Request) {
	f, err := filterOf(r.URL.Query())
	if err != nil {
		c.fail(w, r, err)
		return
	}
	ps, err := c.opts.Ops.Proposals(r.Context(), f)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if ps == nil {
		ps = []audit.Proposal{}
	}
	writeJSON(w, http.StatusOK, ps)
}

func (c *Console) apiCounts(w http.ResponseWriter, r *http.Request) {
	f, err := filterOf(r.URL.Query())
	if err != nil {
		c.fail(w, r, err)
		return
	}
	counts, err := c.opts.Ops.ProposalCounts(r.Context(), f)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, counts)
}

// proposalView is a proposal in full, with the word diff of its contents.
type proposalView struct {
	*audit.ProposalDetail
	Diff struct {
		Old []spanJSON `json:"old"`
		New []spanJSON `json:"new"`
	} `json:"diff"`
}

type spanJSON struct {
	Text string `json:"text"`
	Op   string `json:"op"` // "=", "-" or "+"
}

func viewOf(d *audit.ProposalDetail) *proposalView {
	v := &proposalView{ProposalDetail: d}
	o, n := WordDiff(d.OldContent, d.NewContent)
	for _, s := range o {
		v.Diff.Old = append(v.Diff.Old, spanJSON{s.Text, string(s.Op)})
	}
	for _, s := range n {
		v.Diff.New = append(v.Diff.New, spanJSON{s.Text, string(s.Op)})
	}
	return v
}

func (c *Console) apiProposal(w http.ResponseWriter, r *http.Request) {
	d, err := c.proposalDetail(r)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, viewOf(d))
}

// proposalDetail reads the proposal a request names, within the agent it
// is scoped to (?agent=): another agent's proposal is, to that request, a
// proposal that does not exist.
func (c *Console) proposalDetail(r *http.Request) (*audit.ProposalDetail, error) {
	id := r.PathValue("id")
	d, err := c.opts.Ops.ProposalDetail(r.Context(), id)
	if err != nil {
		return nil, err
	}
	if agent := r.URL.Query().Get("agent"); agent != "" && d.AgentID != agent {
		return nil, fmt.Errorf("no supersession_proposal with id %q for agent %s: %w", id, agent, audit.ErrNotFound)
	}
	return d, nil
}

func (c *Console) apiStats(w http.ResponseWriter, r *http.Request) {
	f, err := statsFilterOf(r)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	st, err := c.opts.Ops.Stats(r.Context(), f, c.opts.Settings().Audit.Enforcement)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func statsFilterOf(r *http.Request) (audit.StatsFilter, error) {
	f := audit.StatsFilter{Agent: r.URL.Query().Get("agent")}
	if s := r.URL.Query().Get("since"); s != "" {
		t, err := audit.ParseSince(s, time.Now())
		if err != nil {
			return f, badf("since: %v", strings.TrimPrefix(err.Error(), "--since "))
		}
		f.Since = t
	}
	return f, nil
}

func (c *Console) apiHistory(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := audit.Filter{Agent: q.Get("agent"), Event: q.Get("event"), Limit: 50}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			c.fail(w, r, badf("limit=%q must be between 1 and 1000", s))
			return
		}
		f.Limit = n
	}
	if s := q.Get("since"); s != "" {
		t, err := audit.ParseSince(s, time.Now())
		if err != nil {
			c.fail(w, r, badf("since: %v", err))
			return
		}
		f.Since = t
	}
	es, err := c.opts.Ops.History(r.Context(), f)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if es == nil {
		es = []audit.Entry{}
	}
	writeJSON(w, http.StatusOK, es)
}

// ---- changes ----

// actionRequest is one decision, on one proposal, on the ones named, or on
// every one a filter selects.
type actionRequest struct {
	Action string   `json:"action"` // accept | reject | apply | undo
	IDs    []string `json:"ids"`    // proposal ids; empty: the filter's
	Filter struct {
		Agent         string   `json:"agent"`
		Status        string   `json:"status"`
		Signal        string   `json:"signal"`
		MinConfidence *float64 `json:"min_confidence"`
		MaxConfidence *float64 `json:"max_confidence"`
	} `json:"filter"`
	Note   string `json:"note"`
	DryRun bool   `json:"dry_run"`
	// All must be true to act on a filter: an empty id list by mistake
	// must not mean "everything".
	All bool `json:"all"`
}

// outcome is what happened to one proposal.
type outcome struct {
	ProposalID string `json:"proposal_id"`
	Status     string `json:"status,omitempty"`     // its status now, when the action was done
	HistoryID  string `json:"history_id,omitempty"` // the row the action wrote
	Error      string `json:"error,omitempty"`      // why it was not done
}

// actionResult is a decision's outcome, per proposal.
type actionResult struct {
	Action  string    `json:"action"`
	DryRun  bool      `json:"dry_run"`
	Done    int       `json:"done"`
	Refused int       `json:"refused"`
	Results []outcome `json:"results"`
}

func (res *actionResult) add(o outcome) {
	if o.Error != "" {
		res.Refused++
	} else if !res.DryRun {
		res.Done++
	}
	res.Results = append(res.Results, o)
}

// perform carries out a decision with the operator commands' own rules:
// mutationsFrozen, protected and changed rows, the agent scope. An error is
// returned only when nothing could be done at all.
func (c *Console) perform(ctx context.Context, ops *audit.Ops, req actionRequest) (*actionResult, error) {
	f := audit.ProposalFilter{Agent: req.Filter.Agent, Status: req.Filter.Status, Signal: req.Filter.Signal,
		MinConfidence: req.Filter.MinConfidence, MaxConfidence: req.Filter.MaxConfidence, IDs: req.IDs}
	if err := f.Validate(); err != nil {
		return nil, badf("%s", strings.ReplaceAll(err.Error(), "--", ""))
	}
	if len(req.IDs) == 0 && !req.All {
		return nil, badf("name the proposals (ids), or set all=true to act on every proposal the filter selects")
	}
	if len(req.IDs) > 0 && req.All {
		return nil, badf("give ids or all=true, not both")
	}
	res := &actionResult{Action: req.Action, DryRun: req.DryRun, Results: []outcome{}}
	var err error
	switch req.Action {
	case "accept", "reject":
		err = c.review(ctx, ops, req, f, res)
	case "apply":
		if len(req.IDs) > 0 {
			err = c.applyNamed(ctx, ops, req, f, res)
		} else {
			err = c.applyAll(ctx, ops, req, f, res)
		}
	case "undo":
		err = c.undo(ctx, ops, req, f, res)
	default:
		return nil, badf("unknown action %q: accept, reject, apply or undo", req.Action)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (c *Console) review(ctx context.Context, ops *audit.Ops, req actionRequest, f audit.ProposalFilter, res *actionResult) error {
	out, err := ops.ReviewAll(ctx, audit.BulkReview{Filter: f, Accept: req.Action == "accept", Note: req.Note, DryRun: req.DryRun})
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, d := range out.Decided {
		seen[d.Proposal.ID] = true
		res.add(outcome{ProposalID: d.Proposal.ID, Status: d.Proposal.Status, HistoryID: d.HistoryID})
	}
	for _, id := range out.Skipped {
		seen[id] = true
		res.add(outcome{ProposalID: id, Error: "no longer pending: decided, applied or changed meanwhile"})
	}
	c.notSelected(ctx, res, req, seen, "not pending")
	return nil
}

// applyNamed applies the named proposals whatever their status, as
// `apply ID...` does: applying is the decision.
func (c *Console) applyNamed(ctx context.Context, ops *audit.Ops, req actionRequest, f audit.ProposalFilter, res *actionResult) error {
	f.Status = ""
	selected, err := ops.Proposals(ctx, f)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var ids []string
	for _, p := range selected {
		seen[p.ID] = true
		ids = append(ids, p.ID)
	}
	cfg := c.opts.Settings().Audit
	switch {
	case req.DryRun:
		for _, id := range ids {
			res.add(outcome{ProposalID: id})
		}
	case cfg.Frozen():
		return audit.FrozenRefusal("apply")
	default:
		for _, a := range ops.Apply(ctx, cfg, ids) {
			res.add(applyOutcome(a))
		}
	}
	c.notSelected(ctx, res, req, seen, "")
	return nil
}

func (c *Console) applyAll(ctx context.Context, ops *audit.Ops, req actionRequest, f audit.ProposalFilter, res *actionResult) error {
	out, err := ops.ApplyAll(ctx, c.opts.Settings().Audit, audit.BulkApply{Filter: f, DryRun: req.DryRun})
	if err != nil {
		return err
	}
	for i, p := range out.Selected {
		if req.DryRun {
			res.add(outcome{ProposalID: p.ID, Status: p.Status})
			continue
		}
		res.add(applyOutcome(out.Results[i]))
	}
	return nil
}

func (c *Console) undo(ctx context.Context, ops *audit.Ops, req actionRequest, f audit.ProposalFilter, res *actionResult) error {
	if req.DryRun {
		return badf("undo has no dry run")
	}
	f.Status = ""
	out, err := ops.UndoAll(ctx, c.opts.Settings().Audit, f)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, u := range out {
		seen[u.ProposalID] = true
		o := outcome{ProposalID: u.ProposalID, HistoryID: u.HistoryID, Status: audit.StatusUndone}
		if u.Err != nil {
			o = outcome{ProposalID: u.ProposalID, Error: errorText(u.Err)}
		}
		res.add(o)
	}
	c.notSelected(ctx, res, req, seen, "not applied")
	return nil
}

func applyOutcome(a audit.Applied) outcome {
	if a.Err != nil {
		return outcome{ProposalID: a.ProposalID, Error: errorText(a.Err)}
	}
	return outcome{ProposalID: a.ProposalID, HistoryID: a.HistoryID, Status: audit.StatusApplied}
}

// errorText is a refusal's reason; runtime errors are not detailed.
func errorText(err error) string {
	if errors.Is(err, audit.ErrRefused) {
		return err.Error()
	}
	return "internal error (see the daemon's log)"
}

// notSelected reports the named proposals the action did not reach, and why.
func (c *Console) notSelected(ctx context.Context, res *actionResult, req actionRequest, seen map[string]bool, state string) {
	for _, id := range req.IDs {
		if seen[id] {
			continue
		}
		why := "no such proposal"
		if ps, err := c.opts.Ops.Proposals(ctx, audit.ProposalFilter{IDs: []string{id}}); err == nil && len(ps) == 1 {
			p := ps[0]
			switch {
			case req.Filter.Agent != "" && p.AgentID != req.Filter.Agent:
				why = fmt.Sprintf("proposal %s belongs to agent %s, not %s (the agent this request is scoped to)", id, p.AgentID, req.Filter.Agent)
			case state != "":
				why = fmt.Sprintf("proposal %s is %s, %s", id, p.Status, state)
			default:
				why = fmt.Sprintf("proposal %s does not match the filter", id)
			}
		}
		res.add(outcome{ProposalID: id, Error: why})
	}
}

// readAction decodes a JSON body (or a form, or nothing) into an action.
func readAction(r *http.Request, req *actionRequest) error {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return badf("read body: %v", err)
		}
		if len(strings.TrimSpace(string(body))) > 0 {
			if err := json.Unmarshal(body, req); err != nil {
				return badf("body is not a JSON action: %v", err)
			}
		}
		return nil
	}
	if err := r.ParseForm(); err != nil {
		return badf("read form: %v", err)
	}
	if s := r.PostFormValue("note"); s != "" {
		req.Note = s
	}
	return nil
}

// apiDecide is POST /api/proposals/{id}/accept|reject|apply. The request
// may scope itself to an agent (?agent=): a proposal of another agent is
// refused, as the CLI refuses cross-agent ids.
func (c *Console) apiDecide(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	if !slices.Contains([]string{"accept", "reject", "apply"}, action) {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "no such action " + action + ": accept, reject or apply"})
		return
	}
	if !c.admit(w, r) {
		return
	}
	req := actionRequest{Action: action, IDs: []string{r.PathValue("id")}}
	req.Filter.Agent = r.URL.Query().Get("agent")
	if err := readAction(r, &req); err != nil {
		c.fail(w, r, err)
		return
	}
	req.Action, req.IDs, req.All, req.DryRun = action, []string{r.PathValue("id")}, false, false
	c.single(w, r, req)
}

// single performs an action on one proposal and answers with its outcome:
// 200, or the refusal as 409 (404 for an unknown id).
func (c *Console) single(w http.ResponseWriter, r *http.Request, req actionRequest) {
	id := req.IDs[0]
	var (
		o   outcome
		err error
	)
	ops := c.ops(r)
	ps, err := ops.Proposals(r.Context(), audit.ProposalFilter{IDs: []string{id}})
	switch {
	case err != nil:
	case len(ps) == 0:
		err = fmt.Errorf("no supersession_proposal with id %q: %w", id, audit.ErrNotFound)
	case req.Filter.Agent != "" && ps[0].AgentID != req.Filter.Agent:
		err = &audit.Refusal{Op: req.Action, Reason: fmt.Sprintf("proposal %s belongs to agent %s, not %s (the agent this request is scoped to)",
			id, ps[0].AgentID, req.Filter.Agent)}
	case req.Action == "apply":
		a := ops.Apply(r.Context(), c.opts.Settings().Audit, []string{id})[0]
		o, err = applyOutcome(a), a.Err
	default:
		var h string
		h, err = ops.Review(r.Context(), id, req.Action == "accept", req.Note)
		o = outcome{ProposalID: id, HistoryID: h, Status: req.Action + "ed"}
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.logAction(r, req.Action, 1)
	writeJSON(w, http.StatusOK, o)
}

// apiUndo is POST /api/history/{id}/undo: the `undo` command.
func (c *Console) apiUndo(w http.ResponseWriter, r *http.Request) {
	if !c.admit(w, r) {
		return
	}
	id := r.PathValue("id")
	if agent := r.URL.Query().Get("agent"); agent != "" {
		e, err := c.opts.Ops.HistoryEntry(r.Context(), id)
		if err != nil {
			c.fail(w, r, err)
			return
		}
		var m struct {
			AgentID string `json:"agent_id"`
		}
		_ = json.Unmarshal(e.Metadata, &m)
		if m.AgentID != agent {
			c.fail(w, r, &audit.Refusal{Op: "undo", Reason: fmt.Sprintf("history row %s belongs to agent %s, not %s (the agent this request is scoped to)", id, m.AgentID, agent)})
			return
		}
	}
	rev, err := c.ops(r).Undo(r.Context(), c.opts.Settings().Audit, id)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.logAction(r, "undo", 1)
	writeJSON(w, http.StatusOK, map[string]any{"history_id": id, "reverted_history_id": rev})
}

// apiBulk is POST /api/bulk: one action on the proposals named, or on every
// proposal the filter selects (all: true).
func (c *Console) apiBulk(w http.ResponseWriter, r *http.Request) {
	if !c.admit(w, r) {
		return
	}
	var req actionRequest
	if err := readAction(r, &req); err != nil {
		c.fail(w, r, err)
		return
	}
	res, err := c.perform(r.Context(), c.ops(r), req)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if !req.DryRun {
		c.logAction(r, req.Action, res.Done)
	}
	writeJSON(w, http.StatusOK, res)
}

// admit lets a change through only with the admin token (bearer, or a
// session and its CSRF token); otherwise it answers 403 with the reason.
func (c *Console) admit(w http.ResponseWriter, r *http.Request) bool {
	a := c.accessOf(r)
	if !a.admin {
		c.deny(w, r, a.why)
		return false
	}
	return true
}

// ops are the operator commands acting as the request's operator: every
// history row they write names the channel (console for a browser
// session, api for a bearer token), the operator, the session and the
// request.
func (c *Console) ops(r *http.Request) *audit.Ops {
	return c.opts.Ops.As(c.accessOf(r).operator)
}

// logAction records who changed what, never with what credential value.
func (c *Console) logAction(r *http.Request, action string, n int) {
	op := c.accessOf(r).operator
	c.opts.Logger.Info("console: decision recorded", "action", action, "proposals", n, "channel", op.Channel, "operator", op.Name,
		"session", op.SessionID, "request", op.RequestID, "path", r.URL.Path)
}
