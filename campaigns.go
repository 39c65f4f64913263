package sendloop

// CampaignsService creates, reads, updates and deletes email campaigns (campaign.*).
type CampaignsService service
