package console

import (
	"net/http"
	"strconv"

	"github.com/supersessiond/supersessiond/internal/audit"
)

// The dependents page (SPEC §14, Honcho): the live documents concluded from
// documents the engine retired, flagged with the ids they cite
// (internal_metadata.stale_basis), for a reviewer to look at again. The
// same list is `supersessiond dependents`. Read-only; undo clears a flag.

type dependentsData struct {
	frame
	Dependents []audit.Dependent
	Workspace  string
}

// dependents reads the list a request asks for (?workspace=, ?limit=).
func (c *Console) dependents(r *http.Request) ([]audit.Dependent, string, error) {
	ws := r.URL.Query().Get("workspace")
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	deps, err := c.opts.Ops.Dependents(r.Context(), ws, min(max(limit, 0), 500))
	return deps, ws, err
}

func (c *Console) dependentsPage(w http.ResponseWriter, r *http.Request) {
	deps, ws, err := c.dependents(r)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.render(w, r, c.pages.dependents, http.StatusOK,
		dependentsData{frame: c.frame(r, "Dependents", "dependents"), Dependents: deps, Workspace: ws})
}

func (c *Console) apiDependents(w http.ResponseWriter, r *http.Request) {
	deps, _, err := c.dependents(r)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, deps)
}
