package ident

import "strings"

// Admin is the operator name the audit trail records for the admin token
// (maintenance.http.adminTokenEnv); no named token may take it.
const Admin = "admin"

// ValidOperator reports whether s may be recorded as an operator's name
// (a named token's, the console's login, the CLI's --operator): 1 to 64
// letters, digits or . _ @ -.
func ValidOperator(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._@-", r)) {
			return false
		}
	}
	return true
}
