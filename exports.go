package sendloop

// ExportsService reads unsubscriptions, suppressions, spam complaints and bounces (export.*).
type ExportsService service
