package audit

// HistorySQL is exported to the tests that check its plans.
const HistorySQL = historySQL
