// Package sendlooptest is an in-memory, loopback fake of the Sendloop service for tests,
// examples and local development: the v3 command API with its authentication (104, 103),
// unknown commands (101), response formats (100: json, xml and php), missing parameters
// (105 with ErrorFields) and the commands' own behaviour, answered as the real service does
// (numbers as strings, PHP-style JSON with empty objects written as []).
//
//	srv := sendlooptest.NewServer(t)
//	client, _ := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
//
// It records every request (Requests), counts how many times each command really executed
// (Executions) and injects faults into the next calls of a command (InjectFault): an HTTP
// status with an optional Retry-After, a connection reset before or after the command ran,
// a delay, or a given ErrorCode.
//
// Where the service's behaviour is not specified the fake decides, and says so here:
//   - API errors are answered with HTTP 200 unless a fault gives another status.
//   - Checks run in this order: response format (100), API key (104), client address (103),
//     command (101), required parameters (105), then the command's own checks.
//   - system.timezones.Get answers {"TimeZones": [names…]}; System.SystemDate.Get answers in UTC.
//   - The xml format wraps the envelope in <response>; keys that are not XML names, and list
//     elements, become <item> (with a key attribute for the former).
//   - account.info.update checks Username (113), Email (111), NewPassword (115: six
//     characters at least) and TimeZone (116) and applies nothing unless all pass.
package sendlooptest
