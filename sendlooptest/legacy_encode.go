package sendlooptest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
)

// appendXMLRPCResponse writes a methodResponse whose one param is the struct v.
func appendXMLRPCResponse(b []byte, v object) []byte {
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<methodResponse><params><param><value>"...)
	b = appendXMLRPC(b, v)
	return append(b, "</value></param></params></methodResponse>\n"...)
}

// appendXMLRPCFault writes a methodResponse holding a fault.
func appendXMLRPCFault(b []byte, code int, message string) []byte {
	b = append(b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<methodResponse><fault><value>"...)
	b = appendXMLRPC(b, object{{"faultCode", code}, {"faultString", message}})
	return append(b, "</value></fault></methodResponse>\n"...)
}

// appendXMLRPC writes the content of a <value>: string, int, bool, float64, object,
// []object or []string.
func appendXMLRPC(b []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		b = append(b, "<string>"...)
		b = appendXMLText(b, v)
		return append(b, "</string>"...)
	case int:
		return append(strconv.AppendInt(append(b, "<int>"...), int64(v), 10), "</int>"...)
	case bool:
		if v {
			return append(b, "<boolean>1</boolean>"...)
		}
		return append(b, "<boolean>0</boolean>"...)
	case float64:
		return append(strconv.AppendFloat(append(b, "<double>"...), v, 'f', -1, 64), "</double>"...)
	case object:
		b = append(b, "<struct>"...)
		for _, m := range v {
			b = append(b, "<member><name>"...)
			b = appendXMLText(b, m.Key)
			b = append(b, "</name><value>"...)
			b = appendXMLRPC(b, m.Value)
			b = append(b, "</value></member>"...)
		}
		return append(b, "</struct>"...)
	case []object:
		b = append(b, "<array><data>"...)
		for _, o := range v {
			b = append(appendXMLRPC(append(b, "<value>"...), o), "</value>"...)
		}
		return append(b, "</data></array>"...)
	case []string:
		b = append(b, "<array><data>"...)
		for _, s := range v {
			b = append(appendXMLRPC(append(b, "<value>"...), s), "</value>"...)
		}
		return append(b, "</data></array>"...)
	}
	panic(fmt.Sprintf("sendlooptest: cannot encode %T in XML-RPC", v))
}

func appendXMLText(b []byte, s string) []byte {
	var buf bytes.Buffer
	xmlText(&buf, s)
	return append(b, buf.Bytes()...)
}

func xmlText(buf *bytes.Buffer, s string) { _ = xml.EscapeText(buf, []byte(s)) }
