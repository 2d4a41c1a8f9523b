package audit

import "github.com/supersessiond/supersessiond/internal/schema"

// The review queue's statements, rendered for the reference schema, for the
// tests that check their plans.
var (
	ProposalsSQL        = schema.ReferenceNames().SQL(proposalsSQL)
	AttributeHistorySQL = schema.ReferenceNames().SQL(attributeHistorySQL)
)
