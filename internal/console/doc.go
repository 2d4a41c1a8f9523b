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
// Security. The console shows the agent's memory, so reads need a token
// as changes do: a Bearer token, or a browser session started by a token
// login (an HttpOnly, SameSite=Strict cookie holding only a random id; the
// session map stays in memory) plus that session's CSRF token on every
// form and POST. The tokens are the admin token and the named ones
// (maintenance.http.adminTokenEnv, maintenance.http.tokens), read from the
// environment; they are compared in constant time and never logged. Only
// the login form and the static files are open, and with
// openReadsOnLoopback a GET from this host that came straight and whose
// Host names the listener: the Host check is what a DNS-rebinding page
// cannot pass. Wrong tokens are counted per client (guessLimiter): ten a
// minute lock that client out, never the others.
//
// Load. The console must never starve the daemon it belongs to: requests
// without a valid token are refused before they touch the database, at
// most MaxConcurrent are served at once (gate; one more waits QueueWait,
// then gets 503), and the daemon gives the console a connection pool of
// its own, so the jobs, the watchdog and /readyz never wait behind it.
//
// Who. Every decision is made through audit.Ops.As with the request's
// operator: the channel (console for a session, api for a bearer token),
// the name (a named token's, or the one given at login with the shared
// admin token), the session's public id and the request's id (also sent
// as X-Request-Id).
//
// HTTP codes: 200 done (a bulk answer lists each proposal's outcome), 400 a
// malformed request, 403 not allowed (no token configured, none or a wrong
// one given, no CSRF token, another origin), 404 no such proposal (or
// another agent's, for a request scoped to one), 409 the operator commands
// refused (the CLI's exit 4: frozen, protected, changed since, already
// decided, another agent's), 429 too many wrong tokens from this client,
// 503 too many requests at once, 500 anything else (logged).
package console
