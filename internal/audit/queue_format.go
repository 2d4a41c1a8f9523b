package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteProposalsJSON prints one JSON object per proposal, its status and
// everything the status was derived from.
func WriteProposalsJSON(w io.Writer, ps []Proposal) error {
	enc := json.NewEncoder(w)
	for _, p := range ps {
		if err := enc.Encode(p); err != nil {
			return err
		}
	}
	return nil
}

// WriteProposalsTable prints the queue for a terminal, one line per
// proposal, with the full id (what review and apply take).
func WriteProposalsTable(w io.Writer, ps []Proposal) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CREATED\tSTATUS\tAGENT\tCHANGE\tCONF\tSIGNALS\tID")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.CreatedAt.UTC().Format("2006-01-02 15:04:05"), p.Status,
			orDash(p.AgentID), clip(p.OldContent, 34)+" → "+clip(p.NewContent, 34),
			strconv.FormatFloat(p.Confidence, 'f', 2, 64), orDash(SignalNames(p)), p.ID)
	}
	return tw.Flush()
}

// SignalNames are a proposal's signal names, comma-separated.
func SignalNames(p Proposal) string {
	names := make([]string, len(p.Signals))
	for i, s := range p.Signals {
		names[i] = s.Name
	}
	return strings.Join(names, ",")
}
