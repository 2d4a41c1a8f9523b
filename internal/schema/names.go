package schema

import (
	"strings"
	"text/template"
)

// Names is what the jobs' statements need to know about the database they
// run against: the quoted, qualified name of every table they use, and the
// shape of the few columns whose type or presence varies between stacks.
// Statements are written as text/template templates over Names ({{.History}},
// {{meta "h"}}) and rendered once, when a job is built: an identifier never
// comes from unchecked text, and a statement costs nothing more to run.
type Names struct {
	// The agent's tables. History is the daemon's own where the store has
	// none (SPEC §14).
	Attributes, Aspects, History, Memories, Messages, Events, Documents, Sources, Mem0 string
	// The daemon's own schema and tables.
	Own, State, Leases, Outbox, Changes, Keys, Deleted string
	// The LLM judge's windows and its spend (SPEC §13).
	Windows, Spend string

	// HasAspects: an aspects table exists (its name goes to the LLM, and an
	// attribute whose aspect is missing is skipped as dangling).
	HasAspects bool
	// MetaCast: memory_history.metadata is text or json, not jsonb; it is
	// read as CAST(metadata AS jsonb) and written as text.
	MetaCast string
	// ToolCalls: messages has a tool_calls column (a message with no body
	// is shown to the LLM as its calls).
	ToolCalls bool
	// Documents' shape (tombstones): superseded_by present, how source_ids
	// holds citations ("jsonb", "array" or "" when the column is absent),
	// a document_sources edge table, an embedding column.
	SupersededBy bool
	SourceIDs    string
	SourceArray  string // source_ids' array type, for "array": text[] or varchar[]
	HasSources   bool
	Embedding    bool
	// SyncState: documents has Honcho's sync_state (a restored document is
	// set pending, so Honcho embeds it again).
	SyncState bool
	// Store is the supersession job's store (SPEC §14).
	Store Store
	// Levels are the Honcho document levels that take part when Store is
	// honcho (maintenance.supersession.honchoLevels; none: explicit).
	Levels []string
	// CompactionWatch: the compaction job only watches the events table
	// (clawbolt's: its owner column is user_id, its conversations are
	// encrypted at rest, it has no memories table).
	CompactionWatch bool
}

// ReferenceNames are the names of the reference schema (SPEC §4) found
// through the search path, with the daemon's tables in schema supersessiond:
// what tests, the demo and the bench use.
func ReferenceNames() *Names {
	return &Names{
		Attributes: quoteIdent("entity_attributes"), Aspects: quoteIdent("entity_aspects"),
		History: quoteIdent("memory_history"), Memories: quoteIdent("memories"), Messages: quoteIdent("messages"),
		Events: quoteIdent("compaction_events"), Documents: quoteIdent("documents"), Sources: quoteIdent("document_sources"),
		Mem0: quoteIdent("mem0"), Store: StoreAttributes,
		Own: quoteIdent("supersessiond"), State: ownTable("supersessiond", "state"), Leases: ownTable("supersessiond", "leases"),
		Outbox: ownTable("supersessiond", "classified"), Changes: ownTable("supersessiond", "changes"),
		Keys:    ownTable("supersessiond", "aspect_keys"),
		Windows: ownTable("supersessiond", "llm_windows"), Spend: ownTable("supersessiond", "llm_spend"),
		Deleted:    ownTable("supersessiond", "deleted_documents"),
		HasAspects: true, ToolCalls: true, SupersededBy: true, SourceIDs: "jsonb", Embedding: true,
	}
}

func ownTable(own, name string) string { return quoteIdent(own) + "." + quoteIdent(name) }

// SQL renders a statement template. A template that does not render is a
// programming error, found by any test that builds the job.
func (n *Names) SQL(text string) string { return render(text, n, n) }

// render executes a statement template over data, with the functions of n.
func render(text string, data any, n *Names) string {
	t, err := template.New("sql").Funcs(template.FuncMap{
		"meta":   n.meta,
		"metaIn": n.metaIn,
	}).Option("missingkey=error").Parse(text)
	if err != nil {
		panic("schema: statement template: " + err.Error())
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		panic("schema: statement template: " + err.Error())
	}
	return b.String()
}

// meta is the history metadata column of a table alias ("" for none), as
// jsonb whatever its declared type.
func (n *Names) meta(alias string) string {
	col := "metadata"
	if alias != "" {
		col = alias + ".metadata"
	}
	if n.MetaCast != "" {
		return "CAST(" + col + " AS jsonb)"
	}
	return col
}

// metaIn is a jsonb expression as the history metadata column stores it.
func (n *Names) metaIn(expr string) string {
	if n.MetaCast != "" {
		return "CAST(" + expr + " AS " + n.MetaCast + ")"
	}
	return expr
}
