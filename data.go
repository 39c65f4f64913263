package sendloop

// CampaignDataService pages through a campaign's activity records (data.campaign.*).
type CampaignDataService service
