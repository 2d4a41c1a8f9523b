package heuristics

// Version names the heuristics' judgment: it changes whenever a decision
// changes (a signal, a confidence, a word list; TestDecisionsUnchanged
// refuses to record new decisions under an old version). The sweep records the
// version a full pass decided with, and a new one forces a full pass, since
// aspects that did not change may now be decided differently (SPEC §11).
const Version = "2026-11-27.61"
