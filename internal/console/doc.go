// Package console is the review console (/ui/) and its JSON API (/api/)
// that `supersessiond run` serves on its HTTP listener (SPEC §10): the
// proposals queue with status and filters, a proposal with both attributes
// side by side, stats, and the decisions (accept, reject, apply, undo, one
// or in bulk).
//
// Design. Pages are rendered on the server from html/template and embedded
// files, so the single binary serves them with no build step; one small
// script (static/console.js, no library) adds keyboard shortcuts, bulk
// selection and an undo after each action. Every decision goes through
// audit.Ops, the very code behind the CLI, so its rules hold here exactly:
// mutationsFrozen, protected and changed rows, one review and one
// application per proposal, and an agent scope when the request names one.
//
// Security. Reads need no credentials from loopback (the listener's
// default); from elsewhere they need the token too. Every change needs the
// admin token, read from the environment variable that
// maintenance.http.adminTokenEnv names: as Authorization: Bearer, or
// through a browser session started by a token login (an HttpOnly,
// SameSite=Strict cookie holding only a random id; the session map stays
// in memory) plus that session's CSRF token on every form and POST. Tokens
// are compared in constant time and never logged; without a token the
// console is read-only and changes answer 403 with the reason.
//
// HTTP codes: 200 done (a bulk answer lists each proposal's outcome), 400 a
// malformed request, 403 not allowed (no token configured, none or a wrong
// one given, no CSRF token, another origin), 404 no such proposal, 409 the
// operator commands refused (the CLI's exit 4: frozen, protected, changed
// since, already decided, another agent's), 500 anything else (logged).
package console
