// The error table of the service specification, one constant and one sentinel per code.

package sendloop

// Error codes of the v3 API. Codes 100–150 are the service's documented table; 151–161 and 212
// have been seen in answers but their meaning is not documented.
const (
	// CodeInvalidFormat (100): invalid response format.
	CodeInvalidFormat ErrorCode = 100
	// CodeInvalidCommand (101): invalid API command.
	CodeInvalidCommand ErrorCode = 101
	// CodeModuleNotFound (102): API command module not found.
	CodeModuleNotFound ErrorCode = 102
	// CodeIPNotAuthorized (103): IP address is not authorized to the API connection.
	CodeIPNotAuthorized ErrorCode = 103
	// CodeInvalidAPIKey (104): invalid API key.
	CodeInvalidAPIKey ErrorCode = 104
	// CodeMissingParameters (105): required parameter(s) missing.
	CodeMissingParameters ErrorCode = 105
	// CodeNotFound (106): requested data not found.
	CodeNotFound ErrorCode = 106
	// CodeInvalidSenderDomain (107): invalid sender email address domain.
	CodeInvalidSenderDomain ErrorCode = 107
	// CodeDomainAlreadyAuthenticated (108): provided domain has been already authenticated.
	CodeDomainAlreadyAuthenticated ErrorCode = 108
	// CodeEmailRegistered (109): email address already registered for another customer.
	CodeEmailRegistered ErrorCode = 109
	// CodeUsernameRegistered (110): username already registered for another customer.
	CodeUsernameRegistered ErrorCode = 110
	// CodeInvalidEmailFormat (111): invalid email address format.
	CodeInvalidEmailFormat ErrorCode = 111
	// CodeNoCustomerAccount (112): no customer account for the provided ID.
	CodeNoCustomerAccount ErrorCode = 112
	// CodeInvalidUsername (113): invalid username.
	CodeInvalidUsername ErrorCode = 113
	// CodeInvalidEmail (114): invalid email address.
	CodeInvalidEmail ErrorCode = 114
	// CodeInvalidPassword (115): invalid password.
	CodeInvalidPassword ErrorCode = 115
	// CodeInvalidParameterValue (116): invalid parameter value provided.
	CodeInvalidParameterValue ErrorCode = 116
	// CodeCampaignSending (117): campaigns are currently sending to the selected list; wait until delivery finishes.
	CodeCampaignSending ErrorCode = 117
	// CodeListNotFound (118): invalid list ID; list not found.
	CodeListNotFound ErrorCode = 118
	// CodeInvalidBounceType (119): BounceType value must be 'hard' or 'soft'.
	CodeInvalidBounceType ErrorCode = 119
	// CodeIntegrationNotFound (120): website integration settings not found for the list ID.
	CodeIntegrationNotFound ErrorCode = 120
	// CodeInvalidSegmentID (121): invalid segment ID.
	CodeInvalidSegmentID ErrorCode = 121
	// CodeInvalidRemoveType (122): RemoveType must be 'all', 'segment' or 'specific'.
	CodeInvalidRemoveType ErrorCode = 122
	// CodeCommandDisabled (123): this API command has been disabled.
	CodeCommandDisabled ErrorCode = 123
	// CodeInvalidEmailFormat2 (124): invalid email address format. Same meaning as 111, raised by another module.
	CodeInvalidEmailFormat2 ErrorCode = 124
	// CodeEmailExists (125): email address already exists in the list.
	CodeEmailExists ErrorCode = 125
	// CodeInvalidEmail2 (126): invalid email address. Same meaning as 114, raised by another module.
	CodeInvalidEmail2 ErrorCode = 126
	// CodeSubscriberNotFound (127): no subscriber record for the email address and list ID.
	CodeSubscriberNotFound ErrorCode = 127
	// CodeInvalidEmailFormat3 (128): invalid email address format. Same meaning as 111, raised by another module.
	CodeInvalidEmailFormat3 ErrorCode = 128
	// CodeInvalidCustomFieldType (129): invalid custom field type.
	CodeInvalidCustomFieldType ErrorCode = 129
	// CodeInvalidCustomFieldDataType (130): invalid custom field data type.
	CodeInvalidCustomFieldDataType ErrorCode = 130
	// CodeMissingFieldOptions (131): FieldOptions field is missing.
	CodeMissingFieldOptions ErrorCode = 131
	// CodeInvalidFieldOptions (132): FieldOption values or format incorrect.
	CodeInvalidFieldOptions ErrorCode = 132
	// CodeInvalidSegmentOperator (133): invalid segment operator.
	CodeInvalidSegmentOperator ErrorCode = 133
	// CodeInvalidSegmentRules (134): segment rules missing or incorrectly formatted.
	CodeInvalidSegmentRules ErrorCode = 134
	// CodeCustomFieldNotFound (135): custom field not found.
	CodeCustomFieldNotFound ErrorCode = 135
	// CodeSegmentNotFound (136): segment not found.
	CodeSegmentNotFound ErrorCode = 136
	// CodeEmailInNameField (137): email address cannot be used in from/reply-to name fields.
	CodeEmailInNameField ErrorCode = 137
	// CodeNoTargets (138): at least TargetListIDs or TargetSegmentIDs (or both) must be sent.
	CodeNoTargets ErrorCode = 138
	// CodeTargetListNotFound (139): one of the provided subscriber lists not found.
	CodeTargetListNotFound ErrorCode = 139
	// CodeTargetSegmentNotFound (140): one of the provided segments not found.
	CodeTargetSegmentNotFound ErrorCode = 140
	// CodeInvalidCustomerID (141): invalid customer ID.
	CodeInvalidCustomerID ErrorCode = 141
	// CodeSubjectTooLong (142): subject is too long.
	CodeSubjectTooLong ErrorCode = 142
	// CodeSubjectRejected (143): subject contains illegal words or is too short.
	CodeSubjectRejected ErrorCode = 143
	// CodeMissingUnsubscribeLink (144): unsubscription link is missing in email content.
	CodeMissingUnsubscribeLink ErrorCode = 144
	// CodeForbiddenContent (145): HTML content contains script, flash or java.
	CodeForbiddenContent ErrorCode = 145
	// CodeUnsubscribeLinkTextTooShort (146): unsubscription link text must be longer than 3 characters.
	CodeUnsubscribeLinkTextTooShort ErrorCode = 146
	// CodeTrialExpired (147): trial period expired; upgrade to access the API.
	CodeTrialExpired ErrorCode = 147
	// CodeInvalidCredentials (148): invalid login credentials.
	CodeInvalidCredentials ErrorCode = 148
	// CodeUserInactive (149): user is not active.
	CodeUserInactive ErrorCode = 149
	// CodeTooManySignupAttempts (150): too many signup attempts; wait for a while.
	CodeTooManySignupAttempts ErrorCode = 150
	// CodeUndocumented151 (151) is seen in the wild; its meaning is not documented.
	CodeUndocumented151 ErrorCode = 151
	// CodeUndocumented152 (152) is seen in the wild; its meaning is not documented.
	CodeUndocumented152 ErrorCode = 152
	// CodeUndocumented153 (153) is seen in the wild; its meaning is not documented.
	CodeUndocumented153 ErrorCode = 153
	// CodeUndocumented154 (154) is seen in the wild; its meaning is not documented.
	CodeUndocumented154 ErrorCode = 154
	// CodeUndocumented155 (155) is seen in the wild; its meaning is not documented.
	CodeUndocumented155 ErrorCode = 155
	// CodeUndocumented156 (156) is seen in the wild; its meaning is not documented.
	CodeUndocumented156 ErrorCode = 156
	// CodeUndocumented157 (157) is seen in the wild; its meaning is not documented.
	CodeUndocumented157 ErrorCode = 157
	// CodeUndocumented158 (158) is seen in the wild; its meaning is not documented.
	CodeUndocumented158 ErrorCode = 158
	// CodeUndocumented159 (159) is seen in the wild; its meaning is not documented.
	CodeUndocumented159 ErrorCode = 159
	// CodeUndocumented160 (160) is seen in the wild; its meaning is not documented.
	CodeUndocumented160 ErrorCode = 160
	// CodeUndocumented161 (161) is seen in the wild; its meaning is not documented.
	CodeUndocumented161 ErrorCode = 161
	// CodeUndocumented212 (212) is seen in the wild; its meaning is not documented.
	CodeUndocumented212 ErrorCode = 212
)

// Sentinel errors, one per ErrorCode: errors.Is(err, ErrListNotFound) holds for an *APIError or a
// *ValidationError carrying that code. Each is the ErrorCode itself, so it cannot be modified.
var (
	// ErrInvalidFormat matches error code 100.
	ErrInvalidFormat error = CodeInvalidFormat
	// ErrInvalidCommand matches error code 101.
	ErrInvalidCommand error = CodeInvalidCommand
	// ErrModuleNotFound matches error code 102.
	ErrModuleNotFound error = CodeModuleNotFound
	// ErrIPNotAuthorized matches error code 103.
	ErrIPNotAuthorized error = CodeIPNotAuthorized
	// ErrInvalidAPIKey matches error code 104.
	ErrInvalidAPIKey error = CodeInvalidAPIKey
	// ErrMissingParameters matches error code 105.
	ErrMissingParameters error = CodeMissingParameters
	// ErrNotFound matches error code 106.
	ErrNotFound error = CodeNotFound
	// ErrInvalidSenderDomain matches error code 107.
	ErrInvalidSenderDomain error = CodeInvalidSenderDomain
	// ErrDomainAlreadyAuthenticated matches error code 108.
	ErrDomainAlreadyAuthenticated error = CodeDomainAlreadyAuthenticated
	// ErrEmailRegistered matches error code 109.
	ErrEmailRegistered error = CodeEmailRegistered
	// ErrUsernameRegistered matches error code 110.
	ErrUsernameRegistered error = CodeUsernameRegistered
	// ErrInvalidEmailFormat matches error code 111.
	ErrInvalidEmailFormat error = CodeInvalidEmailFormat
	// ErrNoCustomerAccount matches error code 112.
	ErrNoCustomerAccount error = CodeNoCustomerAccount
	// ErrInvalidUsername matches error code 113.
	ErrInvalidUsername error = CodeInvalidUsername
	// ErrInvalidEmail matches error code 114.
	ErrInvalidEmail error = CodeInvalidEmail
	// ErrInvalidPassword matches error code 115.
	ErrInvalidPassword error = CodeInvalidPassword
	// ErrInvalidParameterValue matches error code 116.
	ErrInvalidParameterValue error = CodeInvalidParameterValue
	// ErrCampaignSending matches error code 117.
	ErrCampaignSending error = CodeCampaignSending
	// ErrListNotFound matches error code 118.
	ErrListNotFound error = CodeListNotFound
	// ErrInvalidBounceType matches error code 119.
	ErrInvalidBounceType error = CodeInvalidBounceType
	// ErrIntegrationNotFound matches error code 120.
	ErrIntegrationNotFound error = CodeIntegrationNotFound
	// ErrInvalidSegmentID matches error code 121.
	ErrInvalidSegmentID error = CodeInvalidSegmentID
	// ErrInvalidRemoveType matches error code 122.
	ErrInvalidRemoveType error = CodeInvalidRemoveType
	// ErrCommandDisabled matches error code 123.
	ErrCommandDisabled error = CodeCommandDisabled
	// ErrInvalidEmailFormat2 matches error code 124.
	ErrInvalidEmailFormat2 error = CodeInvalidEmailFormat2
	// ErrEmailExists matches error code 125.
	ErrEmailExists error = CodeEmailExists
	// ErrInvalidEmail2 matches error code 126.
	ErrInvalidEmail2 error = CodeInvalidEmail2
	// ErrSubscriberNotFound matches error code 127.
	ErrSubscriberNotFound error = CodeSubscriberNotFound
	// ErrInvalidEmailFormat3 matches error code 128.
	ErrInvalidEmailFormat3 error = CodeInvalidEmailFormat3
	// ErrInvalidCustomFieldType matches error code 129.
	ErrInvalidCustomFieldType error = CodeInvalidCustomFieldType
	// ErrInvalidCustomFieldDataType matches error code 130.
	ErrInvalidCustomFieldDataType error = CodeInvalidCustomFieldDataType
	// ErrMissingFieldOptions matches error code 131.
	ErrMissingFieldOptions error = CodeMissingFieldOptions
	// ErrInvalidFieldOptions matches error code 132.
	ErrInvalidFieldOptions error = CodeInvalidFieldOptions
	// ErrInvalidSegmentOperator matches error code 133.
	ErrInvalidSegmentOperator error = CodeInvalidSegmentOperator
	// ErrInvalidSegmentRules matches error code 134.
	ErrInvalidSegmentRules error = CodeInvalidSegmentRules
	// ErrCustomFieldNotFound matches error code 135.
	ErrCustomFieldNotFound error = CodeCustomFieldNotFound
	// ErrSegmentNotFound matches error code 136.
	ErrSegmentNotFound error = CodeSegmentNotFound
	// ErrEmailInNameField matches error code 137.
	ErrEmailInNameField error = CodeEmailInNameField
	// ErrNoTargets matches error code 138.
	ErrNoTargets error = CodeNoTargets
	// ErrTargetListNotFound matches error code 139.
	ErrTargetListNotFound error = CodeTargetListNotFound
	// ErrTargetSegmentNotFound matches error code 140.
	ErrTargetSegmentNotFound error = CodeTargetSegmentNotFound
	// ErrInvalidCustomerID matches error code 141.
	ErrInvalidCustomerID error = CodeInvalidCustomerID
	// ErrSubjectTooLong matches error code 142.
	ErrSubjectTooLong error = CodeSubjectTooLong
	// ErrSubjectRejected matches error code 143.
	ErrSubjectRejected error = CodeSubjectRejected
	// ErrMissingUnsubscribeLink matches error code 144.
	ErrMissingUnsubscribeLink error = CodeMissingUnsubscribeLink
	// ErrForbiddenContent matches error code 145.
	ErrForbiddenContent error = CodeForbiddenContent
	// ErrUnsubscribeLinkTextTooShort matches error code 146.
	ErrUnsubscribeLinkTextTooShort error = CodeUnsubscribeLinkTextTooShort
	// ErrTrialExpired matches error code 147.
	ErrTrialExpired error = CodeTrialExpired
	// ErrInvalidCredentials matches error code 148.
	ErrInvalidCredentials error = CodeInvalidCredentials
	// ErrUserInactive matches error code 149.
	ErrUserInactive error = CodeUserInactive
	// ErrTooManySignupAttempts matches error code 150.
	ErrTooManySignupAttempts error = CodeTooManySignupAttempts
	// ErrUndocumented151 matches error code 151.
	ErrUndocumented151 error = CodeUndocumented151
	// ErrUndocumented152 matches error code 152.
	ErrUndocumented152 error = CodeUndocumented152
	// ErrUndocumented153 matches error code 153.
	ErrUndocumented153 error = CodeUndocumented153
	// ErrUndocumented154 matches error code 154.
	ErrUndocumented154 error = CodeUndocumented154
	// ErrUndocumented155 matches error code 155.
	ErrUndocumented155 error = CodeUndocumented155
	// ErrUndocumented156 matches error code 156.
	ErrUndocumented156 error = CodeUndocumented156
	// ErrUndocumented157 matches error code 157.
	ErrUndocumented157 error = CodeUndocumented157
	// ErrUndocumented158 matches error code 158.
	ErrUndocumented158 error = CodeUndocumented158
	// ErrUndocumented159 matches error code 159.
	ErrUndocumented159 error = CodeUndocumented159
	// ErrUndocumented160 matches error code 160.
	ErrUndocumented160 error = CodeUndocumented160
	// ErrUndocumented161 matches error code 161.
	ErrUndocumented161 error = CodeUndocumented161
	// ErrUndocumented212 matches error code 212.
	ErrUndocumented212 error = CodeUndocumented212
)

var codeMessages = map[ErrorCode]string{
	CodeInvalidFormat:               "invalid response format",
	CodeInvalidCommand:              "invalid API command",
	CodeModuleNotFound:              "API command module not found",
	CodeIPNotAuthorized:             "IP address is not authorized to the API connection",
	CodeInvalidAPIKey:               "invalid API key",
	CodeMissingParameters:           "required parameter(s) missing",
	CodeNotFound:                    "requested data not found",
	CodeInvalidSenderDomain:         "invalid sender email address domain",
	CodeDomainAlreadyAuthenticated:  "provided domain has been already authenticated",
	CodeEmailRegistered:             "email address already registered for another customer",
	CodeUsernameRegistered:          "username already registered for another customer",
	CodeInvalidEmailFormat:          "invalid email address format",
	CodeNoCustomerAccount:           "no customer account for the provided ID",
	CodeInvalidUsername:             "invalid username",
	CodeInvalidEmail:                "invalid email address",
	CodeInvalidPassword:             "invalid password",
	CodeInvalidParameterValue:       "invalid parameter value provided",
	CodeCampaignSending:             "campaigns are currently sending to the selected list; wait until delivery finishes",
	CodeListNotFound:                "invalid list ID; list not found",
	CodeInvalidBounceType:           "BounceType value must be 'hard' or 'soft'",
	CodeIntegrationNotFound:         "website integration settings not found for the list ID",
	CodeInvalidSegmentID:            "invalid segment ID",
	CodeInvalidRemoveType:           "RemoveType must be 'all', 'segment' or 'specific'",
	CodeCommandDisabled:             "this API command has been disabled",
	CodeInvalidEmailFormat2:         "invalid email address format",
	CodeEmailExists:                 "email address already exists in the list",
	CodeInvalidEmail2:               "invalid email address",
	CodeSubscriberNotFound:          "no subscriber record for the email address and list ID",
	CodeInvalidEmailFormat3:         "invalid email address format",
	CodeInvalidCustomFieldType:      "invalid custom field type",
	CodeInvalidCustomFieldDataType:  "invalid custom field data type",
	CodeMissingFieldOptions:         "FieldOptions field is missing",
	CodeInvalidFieldOptions:         "FieldOption values or format incorrect",
	CodeInvalidSegmentOperator:      "invalid segment operator",
	CodeInvalidSegmentRules:         "segment rules missing or incorrectly formatted",
	CodeCustomFieldNotFound:         "custom field not found",
	CodeSegmentNotFound:             "segment not found",
	CodeEmailInNameField:            "email address cannot be used in from/reply-to name fields",
	CodeNoTargets:                   "at least TargetListIDs or TargetSegmentIDs (or both) must be sent",
	CodeTargetListNotFound:          "one of the provided subscriber lists not found",
	CodeTargetSegmentNotFound:       "one of the provided segments not found",
	CodeInvalidCustomerID:           "invalid customer ID",
	CodeSubjectTooLong:              "subject is too long",
	CodeSubjectRejected:             "subject contains illegal words or is too short",
	CodeMissingUnsubscribeLink:      "unsubscription link is missing in email content",
	CodeForbiddenContent:            "HTML content contains script, flash or java",
	CodeUnsubscribeLinkTextTooShort: "unsubscription link text must be longer than 3 characters",
	CodeTrialExpired:                "trial period expired; upgrade to access the API",
	CodeInvalidCredentials:          "invalid login credentials",
	CodeUserInactive:                "user is not active",
	CodeTooManySignupAttempts:       "too many signup attempts; wait for a while",
	CodeUndocumented151:             "undocumented error",
	CodeUndocumented152:             "undocumented error",
	CodeUndocumented153:             "undocumented error",
	CodeUndocumented154:             "undocumented error",
	CodeUndocumented155:             "undocumented error",
	CodeUndocumented156:             "undocumented error",
	CodeUndocumented157:             "undocumented error",
	CodeUndocumented158:             "undocumented error",
	CodeUndocumented159:             "undocumented error",
	CodeUndocumented160:             "undocumented error",
	CodeUndocumented161:             "undocumented error",
	CodeUndocumented212:             "undocumented error",
}
