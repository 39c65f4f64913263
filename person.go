package sendloop

// PeopleService tracks person profiles: the engagement API's person.json operations.
type PeopleService service
