package sendloop

// ReportsService reads list and campaign statistics (report.*).
type ReportsService service
