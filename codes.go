// The error table of the service specification: one typed constant per documented code,
// which is also the sentinel that errors.Is matches.

package sendloop

// Error codes of the v3 API, codes 100–150 of the service's documented table. Each is both the
// code (apiErr.Code == ErrListNotFound) and the sentinel error (errors.Is(err, ErrListNotFound)).
// Codes seen in answers but not documented (151–161, 212) have no name: they are ErrorCode(n)
// values, whose Message is "undocumented error".
const (
	// ErrInvalidFormat (100): invalid response format.
	ErrInvalidFormat ErrorCode = 100
	// ErrInvalidCommand (101): invalid API command.
	ErrInvalidCommand ErrorCode = 101
	// ErrModuleNotFound (102): API command module not found.
	ErrModuleNotFound ErrorCode = 102
	// ErrIPNotAuthorized (103): IP address is not authorized to the API connection.
	ErrIPNotAuthorized ErrorCode = 103
	// ErrInvalidAPIKey (104): invalid API key.
	ErrInvalidAPIKey ErrorCode = 104
	// ErrMissingParameters (105): required parameter(s) missing.
	ErrMissingParameters ErrorCode = 105
	// ErrNotFound (106): requested data not found.
	ErrNotFound ErrorCode = 106
	// ErrInvalidSenderDomain (107): invalid sender email address domain.
	ErrInvalidSenderDomain ErrorCode = 107
	// ErrDomainAlreadyAuthenticated (108): provided domain has been already authenticated.
	ErrDomainAlreadyAuthenticated ErrorCode = 108
	// ErrEmailRegistered (109): email address already registered for another customer.
	ErrEmailRegistered ErrorCode = 109
	// ErrUsernameRegistered (110): username already registered for another customer.
	ErrUsernameRegistered ErrorCode = 110
	// ErrInvalidEmailFormat (111): invalid email address format.
	ErrInvalidEmailFormat ErrorCode = 111
	// ErrNoCustomerAccount (112): no customer account for the provided ID.
	ErrNoCustomerAccount ErrorCode = 112
	// ErrInvalidUsername (113): invalid username.
	ErrInvalidUsername ErrorCode = 113
	// ErrInvalidEmail (114): invalid email address.
	ErrInvalidEmail ErrorCode = 114
	// ErrInvalidPassword (115): invalid password.
	ErrInvalidPassword ErrorCode = 115
	// ErrInvalidParameterValue (116): invalid parameter value provided.
	ErrInvalidParameterValue ErrorCode = 116
	// ErrCampaignSending (117): campaigns are currently sending to the selected list; wait until delivery finishes.
	ErrCampaignSending ErrorCode = 117
	// ErrListNotFound (118): invalid list ID; list not found.
	ErrListNotFound ErrorCode = 118
	// ErrInvalidBounceType (119): BounceType value must be 'hard' or 'soft'.
	ErrInvalidBounceType ErrorCode = 119
	// ErrIntegrationNotFound (120): website integration settings not found for the list ID.
	ErrIntegrationNotFound ErrorCode = 120
	// ErrInvalidSegmentID (121): invalid segment ID.
	ErrInvalidSegmentID ErrorCode = 121
	// ErrInvalidRemoveType (122): RemoveType must be 'all', 'segment' or 'specific'.
	ErrInvalidRemoveType ErrorCode = 122
	// ErrCommandDisabled (123): this API command has been disabled.
	ErrCommandDisabled ErrorCode = 123
	// ErrInvalidEmailFormat2 (124): invalid email address format. Same meaning as 111, raised by another module.
	ErrInvalidEmailFormat2 ErrorCode = 124
	// ErrEmailExists (125): email address already exists in the list.
	ErrEmailExists ErrorCode = 125
	// ErrInvalidEmail2 (126): invalid email address. Same meaning as 114, raised by another module.
	ErrInvalidEmail2 ErrorCode = 126
	// ErrSubscriberNotFound (127): no subscriber record for the email address and list ID.
	ErrSubscriberNotFound ErrorCode = 127
	// ErrInvalidEmailFormat3 (128): invalid email address format. Same meaning as 111, raised by another module.
	ErrInvalidEmailFormat3 ErrorCode = 128
	// ErrInvalidCustomFieldType (129): invalid custom field type.
	ErrInvalidCustomFieldType ErrorCode = 129
	// ErrInvalidCustomFieldDataType (130): invalid custom field data type.
	ErrInvalidCustomFieldDataType ErrorCode = 130
	// ErrMissingFieldOptions (131): FieldOptions field is missing.
	ErrMissingFieldOptions ErrorCode = 131
	// ErrInvalidFieldOptions (132): FieldOption values or format incorrect.
	ErrInvalidFieldOptions ErrorCode = 132
	// ErrInvalidSegmentOperator (133): invalid segment operator.
	ErrInvalidSegmentOperator ErrorCode = 133
	// ErrInvalidSegmentRules (134): segment rules missing or incorrectly formatted.
	ErrInvalidSegmentRules ErrorCode = 134
	// ErrCustomFieldNotFound (135): custom field not found.
	ErrCustomFieldNotFound ErrorCode = 135
	// ErrSegmentNotFound (136): segment not found.
	ErrSegmentNotFound ErrorCode = 136
	// ErrEmailInNameField (137): email address cannot be used in from/reply-to name fields.
	ErrEmailInNameField ErrorCode = 137
	// ErrNoTargets (138): at least TargetListIDs or TargetSegmentIDs (or both) must be sent.
	ErrNoTargets ErrorCode = 138
	// ErrTargetListNotFound (139): one of the provided subscriber lists not found.
	ErrTargetListNotFound ErrorCode = 139
	// ErrTargetSegmentNotFound (140): one of the provided segments not found.
	ErrTargetSegmentNotFound ErrorCode = 140
	// ErrInvalidCustomerID (141): invalid customer ID.
	ErrInvalidCustomerID ErrorCode = 141
	// ErrSubjectTooLong (142): subject is too long.
	ErrSubjectTooLong ErrorCode = 142
	// ErrSubjectRejected (143): subject contains illegal words or is too short.
	ErrSubjectRejected ErrorCode = 143
	// ErrMissingUnsubscribeLink (144): unsubscription link is missing in email content.
	ErrMissingUnsubscribeLink ErrorCode = 144
	// ErrForbiddenContent (145): HTML content contains script, flash or java.
	ErrForbiddenContent ErrorCode = 145
	// ErrUnsubscribeLinkTextTooShort (146): unsubscription link text must be longer than 3 characters.
	ErrUnsubscribeLinkTextTooShort ErrorCode = 146
	// ErrTrialExpired (147): trial period expired; upgrade to access the API.
	ErrTrialExpired ErrorCode = 147
	// ErrInvalidCredentials (148): invalid login credentials.
	ErrInvalidCredentials ErrorCode = 148
	// ErrUserInactive (149): user is not active.
	ErrUserInactive ErrorCode = 149
	// ErrTooManySignupAttempts (150): too many signup attempts; wait for a while.
	ErrTooManySignupAttempts ErrorCode = 150
)

var codeMessages = map[ErrorCode]string{
	ErrInvalidFormat:               "invalid response format",
	ErrInvalidCommand:              "invalid API command",
	ErrModuleNotFound:              "API command module not found",
	ErrIPNotAuthorized:             "IP address is not authorized to the API connection",
	ErrInvalidAPIKey:               "invalid API key",
	ErrMissingParameters:           "required parameter(s) missing",
	ErrNotFound:                    "requested data not found",
	ErrInvalidSenderDomain:         "invalid sender email address domain",
	ErrDomainAlreadyAuthenticated:  "provided domain has been already authenticated",
	ErrEmailRegistered:             "email address already registered for another customer",
	ErrUsernameRegistered:          "username already registered for another customer",
	ErrInvalidEmailFormat:          "invalid email address format",
	ErrNoCustomerAccount:           "no customer account for the provided ID",
	ErrInvalidUsername:             "invalid username",
	ErrInvalidEmail:                "invalid email address",
	ErrInvalidPassword:             "invalid password",
	ErrInvalidParameterValue:       "invalid parameter value provided",
	ErrCampaignSending:             "campaigns are currently sending to the selected list; wait until delivery finishes",
	ErrListNotFound:                "invalid list ID; list not found",
	ErrInvalidBounceType:           "BounceType value must be 'hard' or 'soft'",
	ErrIntegrationNotFound:         "website integration settings not found for the list ID",
	ErrInvalidSegmentID:            "invalid segment ID",
	ErrInvalidRemoveType:           "RemoveType must be 'all', 'segment' or 'specific'",
	ErrCommandDisabled:             "this API command has been disabled",
	ErrInvalidEmailFormat2:         "invalid email address format",
	ErrEmailExists:                 "email address already exists in the list",
	ErrInvalidEmail2:               "invalid email address",
	ErrSubscriberNotFound:          "no subscriber record for the email address and list ID",
	ErrInvalidEmailFormat3:         "invalid email address format",
	ErrInvalidCustomFieldType:      "invalid custom field type",
	ErrInvalidCustomFieldDataType:  "invalid custom field data type",
	ErrMissingFieldOptions:         "FieldOptions field is missing",
	ErrInvalidFieldOptions:         "FieldOption values or format incorrect",
	ErrInvalidSegmentOperator:      "invalid segment operator",
	ErrInvalidSegmentRules:         "segment rules missing or incorrectly formatted",
	ErrCustomFieldNotFound:         "custom field not found",
	ErrSegmentNotFound:             "segment not found",
	ErrEmailInNameField:            "email address cannot be used in from/reply-to name fields",
	ErrNoTargets:                   "at least TargetListIDs or TargetSegmentIDs (or both) must be sent",
	ErrTargetListNotFound:          "one of the provided subscriber lists not found",
	ErrTargetSegmentNotFound:       "one of the provided segments not found",
	ErrInvalidCustomerID:           "invalid customer ID",
	ErrSubjectTooLong:              "subject is too long",
	ErrSubjectRejected:             "subject contains illegal words or is too short",
	ErrMissingUnsubscribeLink:      "unsubscription link is missing in email content",
	ErrForbiddenContent:            "HTML content contains script, flash or java",
	ErrUnsubscribeLinkTextTooShort: "unsubscription link text must be longer than 3 characters",
	ErrTrialExpired:                "trial period expired; upgrade to access the API",
	ErrInvalidCredentials:          "invalid login credentials",
	ErrUserInactive:                "user is not active",
	ErrTooManySignupAttempts:       "too many signup attempts; wait for a while",
	ErrorCode(151):                 "undocumented error",
	ErrorCode(152):                 "undocumented error",
	ErrorCode(153):                 "undocumented error",
	ErrorCode(154):                 "undocumented error",
	ErrorCode(155):                 "undocumented error",
	ErrorCode(156):                 "undocumented error",
	ErrorCode(157):                 "undocumented error",
	ErrorCode(158):                 "undocumented error",
	ErrorCode(159):                 "undocumented error",
	ErrorCode(160):                 "undocumented error",
	ErrorCode(161):                 "undocumented error",
	ErrorCode(212):                 "undocumented error",
}
