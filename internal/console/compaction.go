package console

import (
	"net/http"

	"github.com/supersessiond/supersessiond/jobs/compaction"
)

// The compaction watch's page (SPEC §14): where the compaction job cannot
// re-compact (clawbolt), the events the stack's own recovery left pending,
// read-only. It is served beside the review pages, or alone when the
// supersession job is off (as beside clawbolt): then the review pages
// answer 404 with the reason, and /ui/ leads here.

type compactionData struct {
	frame
	W *compaction.Watch
}

func (c *Console) compactionPage(w http.ResponseWriter, r *http.Request) {
	watch, err := c.opts.Compaction(r.Context())
	if err != nil {
		c.opts.Logger.Error("console: compaction page", "err", err)
		http.Error(w, "internal error (see the daemon's log)", http.StatusInternalServerError)
		return
	}
	c.render(w, r, c.pages.compaction, http.StatusOK, compactionData{frame: c.frame(r, "Compaction", "compaction"), W: watch})
}

func (c *Console) apiCompaction(w http.ResponseWriter, r *http.Request) {
	watch, err := c.opts.Compaction(r.Context())
	if err != nil {
		c.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, watch)
}

// noReview answers the review pages and API when the supersession job is
// off and the console serves the compaction watch alone.
func (c *Console) noReview(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/ui/" && r.Method == http.MethodGet {
		http.Redirect(w, r, "/ui/compaction", http.StatusSeeOther)
		return
	}
	c.answer(w, r, http.StatusNotFound, "the review queue is off: it needs the supersession job "+
		"(memory.pipelineV2.structural.supersessionEnabled: true, and its tables: supersessiond check says); "+
		"this console shows the compaction watch at /ui/compaction")
}
