// Package csvfile reads CSV files of subscribers or recipients as spreadsheets write them:
// the record reader of `sendloop sync` (through package listsync) and of
// `sendloop send --recipients`, for any Go program reading such a file.
//
// Reader reads, in order:
//
//   - the encoding: UTF-8, or UTF-16 LE or BE, recognised by a byte-order mark (skipped);
//     latin1 (ISO-8859-1) and windows-1252 when ReadOptions.Encoding names them (ParseEncoding
//     accepts the usual aliases). A header row that is not UTF-8 is refused with an
//     *EncodingError naming the encoding it looks like.
//   - the delimiter: given in ReadOptions.Comma (ParseDelimiter reads "tab", "semicolon",
//     …), else Excel's optional "sep=X" first line, else whichever of comma, semicolon and
//     tab the header line holds most of (DetectComma).
//   - the header row (Reader.Header); a file without one is ErrNoHeader.
//   - the records (Reader.Read), by RFC 4180: a quoted value is kept byte for byte but for
//     its doubled quotes, so a line break in it stays CRLF, LF or a lone CR as written
//     (where encoding/csv turns CRLF into LF); outside quotes, LF or CRLF ends a record and
//     blank lines are skipped. Each Record carries the line it starts on; Reader.Offset says
//     how far into the file the reading is. A record that breaks the quoting is returned
//     with its Err and its first line as written, and reading goes on after it.
//
// Record.Address is the one rule by which a record gives its address or is rejected (the
// wrong number of fields, invalid UTF-8, a missing or invalid address, a malformed record),
// with the text the user can look for in the file. AddressColumn finds the address column
// (EmailAddress in any common spelling, or the one a ColumnMap names), and Reader.Named
// yields each record as its address and its other columns by name.
package csvfile
