package sendloop

// ListsService creates, reads and configures subscriber lists (list.*).
type ListsService service
