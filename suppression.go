package sendloop

// SuppressionService reads and extends the suppression list (suppression.list.*).
type SuppressionService service
