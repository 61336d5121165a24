/*
 * expr_parse_update_test.c — the UpdateExpression and ProjectionExpression
 * half of the parser's case table (the conditions and the limits are in
 * expr_parse_test.c; the case format is in expr_parse_util.h).
 */
#include "expr_parse_util.h"

ParameterizedTestParameters(expr_parse, updates_and_projections)
{
	static struct pcase cases[] = {
		{ 'P', "!!!", "", "",
		    "Invalid ProjectionExpression: Syntax error; token: "
		    "\"!\", near: \"!!\"" },
		{ 'P', "!!! INVALID !!!", "", "",
		    "Invalid ProjectionExpression: Syntax error; token: "
		    "\"!\", near: \"!!\"" },
		{ 'P', "a b", "", "",
		    "Invalid ProjectionExpression: Syntax error; token: "
		    "\"b\", near: \"a b\"" },
		{ 'P', "a,", "", "",
		    "Invalid ProjectionExpression: Syntax error; token: "
		    "\"<EOF>\", near: \",\"" },
		{ 'P', ",a", "", "",
		    "Invalid ProjectionExpression: Syntax error; token: "
		    "\",\", near: \",a\"" },
		{ 'P', "a,,b", "", "",
		    "Invalid ProjectionExpression: Syntax error; token: "
		    "\",\", near: \",,b\"" },
		{ 'P', "a.", "", "",
		    "Invalid ProjectionExpression: Syntax error; token: "
		    "\"<EOF>\", near: \".\"" },
		{ 'P', "a[", "", "",
		    "Invalid ProjectionExpression: Syntax error; token: "
		    "\"<EOF>\", near: \"[\"" },
		{ 'P', "a[1", "", "",
		    "Invalid ProjectionExpression: Syntax error; token: "
		    "\"<EOF>\", near: \"1\"" },
		{ 'P', "a[b]", "", "",
		    "Invalid ProjectionExpression: Syntax error; token: "
		    "\"b\", near: \"[b]\"" },
		{ 'P', "a[-1]", "", "",
		    "Invalid ProjectionExpression: Syntax error; token: "
		    "\"-\", near: \"[-1\"" },
		{ 'P', ":v", "", "",
		    "Invalid ProjectionExpression: Syntax error; token: "
		    "\":v\", near: \":v\"" },
		{ 'P', "(a)", "", "",
		    "Invalid ProjectionExpression: Syntax error; token: "
		    "\"(\", near: \"(a\"" },
		{ 'U', "whatever", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"wha"
		    "tever\", near: \"whatever\"" },
		{ 'U', "INVALID SYNTAX HERE", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"INV"
		    "ALID\", near: \"INVALID SYNTAX\"" },
		{ 'U', "HELLO b = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"HEL"
		    "LO\", near: \"HELLO b\"" },
		{ 'U', "SET a", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"<EO"
		    "F>\", near: \"a\"" },
		{ 'U', "set a", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"<EO"
		    "F>\", near: \"a\"" },
		{ 'U', "add a", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"<EO"
		    "F>\", near: \"a\"" },
		{ 'U', "delete a", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"<EO"
		    "F>\", near: \"a\"" },
		{ 'U', "set a=set", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"set"
		    "\", near: \"=set\"" },
		{ 'U', "remove a = b", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"=\""
		    ", near: \"a = b\"" },
		{ 'U', "add a = b", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"=\""
		    ", near: \"a = b\"" },
		{ 'U', "delete a = b", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"=\""
		    ", near: \"a = b\"" },
		{ 'U', "delete a b", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"b\""
		    ", near: \"a b\"" },
		{ 'U', "add abort b", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"b\""
		    ", near: \"abort b\"" },
		{ 'U', "remove a b", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"b\""
		    ", near: \"a b\"" },
		{ 'U', "set a b", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"b\""
		    ", near: \"a b\"" },
		{ 'U', "set :a = b", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \":a"
		    "\", near: \"set :a =\"" },
		{ 'U', "add :a b", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \":a"
		    "\", near: \"add :a b\"" },
		{ 'U', "remove :a", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \":a"
		    "\", near: \"remove :a\"" },
		{ 'U', "set a = b / c", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"/\""
		    ", near: \"b / c\"" },
		{ 'U', "set a = b * c", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"*\""
		    ", near: \"b * c\"" },
		{ 'U', "set a[1] = \"eight\"", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"\""
		    "\", near: \"= \"eight\"" },
		{ 'U', "set a[1] = 1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"1\""
		    ", near: \"= 1\"" },
		{ 'U', "SET a = if_not_exist(a, 100)", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"100"
		    "\", near: \", 100)\"" },
		{ 'U', "SET if_not_exist(a, b) = a", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"(\""
		    ", near: \"if_not_exist(a\"" },
		{ 'U', "set (a = (b + c))", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"(\""
		    ", near: \"set (a\"" },
		{ 'U', "set a = (b.c).d + e", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \".\""
		    ", near: \").d\"" },
		{ 'U', "set a = (b.c)[0] + e", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"[\""
		    ", near: \")[0\"" },
		{ 'U', "set a = b + c + d", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"+\""
		    ", near: \"c + d\"" },
		{ 'U', "SET a = (b + c) + d", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"+\""
		    ", near: \") + d\"" },
		{ 'U', "SET a = (((b)))", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"(\""
		    ", near: \"((b\"" },
		{ 'U', "SET _123 = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"_\""
		    ", near: \"SET _123\"" },
		{ 'U', "SET _abc = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"_\""
		    ", near: \"SET _abc\"" },
		{ 'U', "SET 123a = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"123"
		    "\", near: \"SET 123a\"" },
		{ 'U', "SET 123 = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"123"
		    "\", near: \"SET 123 =\"" },
		{ 'U', "SET hi-there = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"-\""
		    ", near: \"hi-there\"" },
		{ 'U', "SET hi$there = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"$\""
		    ", near: \"hi$there\"" },
		{ 'U', "SET \"hithere\" = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"\""
		    "\", near: \"SET \"hithere\"" },
		{ 'U', "SET !hithere = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"!\""
		    ", near: \"SET !hithere\"" },
		{ 'U', "SET #hi-there = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"-\""
		    ", near: \"#hi-there\"" },
		{ 'U', "SET #!hi = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"#\""
		    ", near: \"SET #!\"" },
		{ 'U', "SET # = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"#\""
		    ", near: \"SET # =\"" },
		{ 'U', "SET a = :hi!there", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"!\""
		    ", near: \":hi!there\"" },
		{ 'U', "SET a = :", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \":\""
		    ", near: \"= :\"" },
		{ 'U', "SET :a = :b", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \":a"
		    "\", near: \"SET :a =\"" },
		{ 'U', "SET a[:xyz] = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \":xy"
		    "z\", near: \"[:xyz]\"" },
		{ 'U', "SET a[#xyz] = :val1", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"#xy"
		    "z\", near: \"[#xyz]\"" },
		{ 'U', "SET b = if_not_exists(non@sense, :val1)", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"@\""
		    ", near: \"non@sense\"" },
		{ 'U', "SET c = if_not_exists(c, :val1+:val2)", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"+\""
		    ", near: \":val1+:val2\"" },
		{ 'U', "SET a = _f(b,c,d)", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"_\""
		    ", near: \"= _f\"" },
		{ 'U', "SET a = :v,", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"<EO"
		    "F>\", near: \",\"" },
		{ 'U', "SET a = :v, , b = :v", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \",\""
		    ", near: \", , b\"" },
		{ 'U', "SET a = :v REMOVE", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"<EO"
		    "F>\", near: \"REMOVE\"" },
		{ 'U', "SET a = b AND c", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"AND"
		    "\", near: \"b AND c\"" },
		{ 'U', "SET a = b c", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"c\""
		    ", near: \"b c\"" },
		{ 'U', "SET a = -b", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"-\""
		    ", near: \"= -b\"" },
		{ 'U', "SET a.set = :v", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"set"
		    "\", near: \".set =\"" },
		{ 'U', "REMOVE a[1].", "", "",
		    "Invalid UpdateExpression: Syntax error; token: \"<EO"
		    "F>\", near: \".\"" },
		{ 'U', "", "", "",
		    "Invalid UpdateExpression: The expression can not be "
		    "empty;" },
		{ 'U', "   ", "", "",
		    "Invalid UpdateExpression: The expression can not be "
		    "empty;" },
		{ 'U', " \t\n", "", "",
		    "Invalid UpdateExpression: The expression can not be "
		    "empty;" },
		{ 'P', "", "", "",
		    "Invalid ProjectionExpression: The expression can not"
		    " be empty;" },
		{ 'P', "   ", "", "",
		    "Invalid ProjectionExpression: The expression can not"
		    " be empty;" },
		{ 'P', " \t\n", "", "",
		    "Invalid ProjectionExpression: The expression can not"
		    " be empty;" },
		{ 'U', " set #c = :c set abOrt = true ", "#a=a;#b=b",
		    ":a=\"a\";:b=\"a\"",
		    "Invalid UpdateExpression: Attribute name is a reserv"
		    "ed keyword; reserved keyword: abOrt" },
		{ 'U', " remove Absolute ", "", "",
		    "Invalid UpdateExpression: Attribute name is a reserv"
		    "ed keyword; reserved keyword: Absolute" },
		{ 'U', "SET a = :v, b = zone", "", ":v=1",
		    "Invalid UpdateExpression: Attribute name is a reserv"
		    "ed keyword; reserved keyword: zone" },
		{ 'P', "a, Name", "", "",
		    "Invalid ProjectionExpression: Attribute name is a re"
		    "served keyword; reserved keyword: Name" },
		{ 'P', "a.b[1].ttl", "", "",
		    "Invalid ProjectionExpression: Attribute name is a re"
		    "served keyword; reserved keyword: ttl" },
		{ 'P', "#n, a", "#n=status", "", "" },
		{ 'U', "SET #n = :v", "#n=status", ":v=1", "" },
		{ 'U', "SET #c = if_not_exists(:c)", "#a=a;#b=b",
		    ":a=\"a\";:b=\"a\"",
		    "Invalid UpdateExpression: An expression attribute na"
		    "me used in the document path is not defined; attribu"
		    "te name: #c" },
		{ 'U', "SET #a = if_not_exists(:c)", "#a=a;#b=b",
		    ":a=\"a\";:b=\"a\"",
		    "Invalid UpdateExpression: An expression attribute va"
		    "lue used in expression is not defined; attribute val"
		    "ue: :c" },
		{ 'U', "SET b = :val1", "", ":val2=4",
		    "Invalid UpdateExpression: An expression attribute va"
		    "lue used in expression is not defined; attribute val"
		    "ue: :val1" },
		{ 'U', "SET #name = :val1", "#wrongname=hello", ":val2=4",
		    "Invalid UpdateExpression: An expression attribute na"
		    "me used in the document path is not defined; attribu"
		    "te name: #name" },
		{ 'U', "SET a = :v ADD b :nope", "", ":v=1",
		    "Invalid UpdateExpression: An expression attribute va"
		    "lue used in expression is not defined; attribute val"
		    "ue: :nope" },
		{ 'U', "SET b = if_not_exists(:val2, :val1)", "", ":val1=6",
		    "Invalid UpdateExpression: An expression attribute va"
		    "lue used in expression is not defined; attribute val"
		    "ue: :val2" },
		{ 'P', "#x", "", "",
		    "Invalid ProjectionExpression: An expression attribut"
		    "e name used in the document path is not defined; att"
		    "ribute name: #x" },
		{ 'P', "a.#x", "#wrong=b", "",
		    "Invalid ProjectionExpression: An expression attribut"
		    "e name used in the document path is not defined; att"
		    "ribute name: #x" },
		{ 'U', "SET a = f(b,c,d)", "", "",
		    "Invalid UpdateExpression: Invalid function name; fun"
		    "ction: f" },
		{ 'U', "SET a = f123_hi(b,c,d)", "", "",
		    "Invalid UpdateExpression: Invalid function name; fun"
		    "ction: f123_hi" },
		{ 'U', "SET a = LIST_APPEND(:val1, :val2)", "",
		    ":val1=[1];:val2=[2]",
		    "Invalid UpdateExpression: Invalid function name; fun"
		    "ction: LIST_APPEND" },
		{ 'U', "set #c = if_not_exist(:c) set c = d", "#a=a;#b=b",
		    ":a=\"a\";:b=\"a\"",
		    "Invalid UpdateExpression: Invalid function name; fun"
		    "ction: if_not_exist" },
		{ 'U', "SET a = size(b)", "", "",
		    "Invalid UpdateExpression: The function is not allowe"
		    "d in an update expression; function: size" },
		{ 'U', "SET a = attribute_exists(b)", "", "",
		    "Invalid UpdateExpression: The function is not allowe"
		    "d in an update expression; function: attribute_exist"
		    "s" },
		{ 'U', "SET a = list_append(list_append(:val1, :val2), :val3"
		    ")", "", ":val1=[\"a\"];:val2=[\"1\"];:val3=[\"hi\"]",
		    "Invalid UpdateExpression: The function is not allowe"
		    "d to be used this way in an expression; function: li"
		    "st_append" },
		{ 'U', "SET a = if_not_exists(b, list_append(:val1, :val2))",
		    "", ":val1=[\"a\"];:val2=[\"1\"]",
		    "Invalid UpdateExpression: The function is not allowe"
		    "d to be used this way in an expression; function: li"
		    "st_append" },
		{ 'U', "set a = if_not_exists(c)", "", "",
		    "Invalid UpdateExpression: Incorrect number of operan"
		    "ds for operator or function; operator or function: i"
		    "f_not_exists, number of operands: 1" },
		{ 'U', "set a = list_append(c)", "", "",
		    "Invalid UpdateExpression: Incorrect number of operan"
		    "ds for operator or function; operator or function: l"
		    "ist_append, number of operands: 1" },
		{ 'U', "SET a = list_append(:val1, :val2, :val3)", "",
		    ":val1=[1];:val2=[2];:val3=[3]",
		    "Invalid UpdateExpression: Incorrect number of operan"
		    "ds for operator or function; operator or function: l"
		    "ist_append, number of operands: 3" },
		{ 'U', "set a = #c set c = :d", "#a=a;#b=b",
		    ":a=\"a\";:b=\"a\"",
		    "Invalid UpdateExpression: The \"SET\" section can on"
		    "ly be used once in an update expression;" },
		{ 'U', "remove #d set a = b remove e", "#a=a;#b=b",
		    ":a=\"a\";:b=\"a\"",
		    "Invalid UpdateExpression: The \"REMOVE\" section can"
		    " only be used once in an update expression;" },
		{ 'U', "add #d :e set a = b add e :f", "#a=a;#b=b",
		    ":a=\"a\";:b=\"a\"",
		    "Invalid UpdateExpression: The \"ADD\" section can on"
		    "ly be used once in an update expression;" },
		{ 'U', "delete #d :e set a = b delete #e :f", "#a=a;#b=b",
		    ":a=\"a\";:b=\"a\"",
		    "Invalid UpdateExpression: The \"DELETE\" section can"
		    " only be used once in an update expression;" },
		{ 'U', "SET a = :val1 REMOVE a SET b = :val2", "#a=a;#b=b",
		    ":a=\"a\";:b=\"a\"",
		    "Invalid UpdateExpression: The \"SET\" section can on"
		    "ly be used once in an update expression;" },
		{ 'U', "set d[1] = a, d.b = a, c[1].a = a, #c = if_not_exist"
		    "s(a)", "#c=c;#d=[3];#a1=a;#a2=a",
		    ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [c, [1], a], path two: [c]" },
		{ 'U', "set c.b.#c = a, c = a, #d = a",
		    "#c=c;#d=[3];#a1=a;#a2=a", ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [c, b, c], path two: [c]" },
		{ 'U', "set a = b remove a, #c, #d", "#c=c;#d=[3];#a1=a;#a2=a",
		    ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [a], path two: [a]" },
		{ 'U', "set #c[3].#d = a, #c[3] = a",
		    "#c=c;#d=[3];#a1=a;#a2=a", ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [c, [3], [3]], path two: [c, [3]]" },
		{ 'U', "remove c, #c.a, #d", "#c=c;#d=[3];#a1=a;#a2=a",
		    ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [c], path two: [c, a]" },
		{ 'U', "remove a, #c, a, #d", "#c=c;#d=[3];#a1=a;#a2=a",
		    ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [a], path two: [a]" },
		{ 'U', "SET a = :val1, a.b = :val2", "#c=c;#d=[3];#a1=a;#a2=a",
		    ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [a], path two: [a, b]" },
		{ 'U', "SET a.b = :val1, a = :val2", "#c=c;#d=[3];#a1=a;#a2=a",
		    ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [a, b], path two: [a]" },
		{ 'U', "SET a.b = :val1, a.b.c.d.e = :val2",
		    "#c=c;#d=[3];#a1=a;#a2=a", ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [a, b], path two: [a, b, c, d, e]" },
		{ 'U', "SET a[1][1] = :val1, a[1] = :val2",
		    "#c=c;#d=[3];#a1=a;#a2=a", ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [a, [1], [1]], path two: [a, [1]]" },
		{ 'U', "SET a = :val1 REMOVE a", "#c=c;#d=[3];#a1=a;#a2=a",
		    ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [a], path two: [a]" },
		{ 'U', "REMOVE a SET a = :val1", "#c=c;#d=[3];#a1=a;#a2=a",
		    ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [a], path two: [a]" },
		{ 'U', "SET #a1 = :val1, #a2 = :val2",
		    "#c=c;#d=[3];#a1=a;#a2=a", ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [a], path two: [a]" },
		{ 'U', "ADD a :val1 DELETE a :val2", "#c=c;#d=[3];#a1=a;#a2=a",
		    ":val1=NS(1);:val2=NS(2)",
		    "Invalid UpdateExpression: Two document paths overlap"
		    " with each other; must remove or rewrite one of thes"
		    "e paths; path one: [a], path two: [a]" },
		{ 'U', "set #c[3].#d = a, #c.#d[3] = if_not_exists(a)",
		    "#b=b;#c=c;#d=[3]", ":val1=1;:val2=2",
		    "Invalid UpdateExpression: Two document paths conflic"
		    "t with each other; must remove or rewrite one of the"
		    "se paths; path one: [c, [3], [3]], path two: [c, [3]"
		    ", [3]]" },
		{ 'U', "remove a.#c set a[1] = #d", "#b=b;#c=c;#d=[3]",
		    ":val1=1;:val2=2",
		    "Invalid UpdateExpression: Two document paths conflic"
		    "t with each other; must remove or rewrite one of the"
		    "se paths; path one: [a, c], path two: [a, [1]]" },
		{ 'U', "SET a.b = :val1, a[1] = :val2", "#b=b;#c=c;#d=[3]",
		    ":val1=1;:val2=2",
		    "Invalid UpdateExpression: Two document paths conflic"
		    "t with each other; must remove or rewrite one of the"
		    "se paths; path one: [a, b], path two: [a, [1]]" },
		{ 'U', "SET a.b.c = :val1, a.b[2] = :val2", "#b=b;#c=c;#d=[3]",
		    ":val1=1;:val2=2",
		    "Invalid UpdateExpression: Two document paths conflic"
		    "t with each other; must remove or rewrite one of the"
		    "se paths; path one: [a, b, c], path two: [a, b, [2]]" },
		{ 'U', "SET a.b = :val1, a.c.d = :val2, b.x = :val3 REMOVE a"
		    ".x, b.y", "@", ":val1=1;:val2=2;:val3=3", "" },
		{ 'U', "SET a[1] = :val1, a[2] = :val2", "@",
		    ":val1=1;:val2=2;:val3=3", "" },
		{ 'U', "SET a.b = :val1, a.c = :val1", "@",
		    ":val1=1;:val2=2;:val3=3", "" },
		{ 'U', "REMOVE a SET b = a", "@", ":val1=1;:val2=2;:val3=3",
		    "" },
		{ 'U', "SET c = b REMOVE b", "@", ":val1=1;:val2=2;:val3=3",
		    "" },
		{ 'U', "SET x = :val1, y = x", "@", ":val1=1;:val2=2;:val3=3",
		    "" },
		{ 'P', "a, a", "", "",
		    "Invalid ProjectionExpression: Two document paths ove"
		    "rlap with each other; must remove or rewrite one of "
		    "these paths; path one: [a], path two: [a]" },
		{ 'P', "a.b, a.b", "", "",
		    "Invalid ProjectionExpression: Two document paths ove"
		    "rlap with each other; must remove or rewrite one of "
		    "these paths; path one: [a, b], path two: [a, b]" },
		{ 'P', "a[1], a[1]", "", "",
		    "Invalid ProjectionExpression: Two document paths ove"
		    "rlap with each other; must remove or rewrite one of "
		    "these paths; path one: [a, [1]], path two: [a, [1]]" },
		{ 'P', "a, a.b", "", "",
		    "Invalid ProjectionExpression: Two document paths ove"
		    "rlap with each other; must remove or rewrite one of "
		    "these paths; path one: [a], path two: [a, b]" },
		{ 'P', "a.b, a", "", "",
		    "Invalid ProjectionExpression: Two document paths ove"
		    "rlap with each other; must remove or rewrite one of "
		    "these paths; path one: [a, b], path two: [a]" },
		{ 'P', "a.b, a.b[2]", "", "",
		    "Invalid ProjectionExpression: Two document paths ove"
		    "rlap with each other; must remove or rewrite one of "
		    "these paths; path one: [a, b], path two: [a, b, [2]]" },
		{ 'P', "a, a.b[2].c", "", "",
		    "Invalid ProjectionExpression: Two document paths ove"
		    "rlap with each other; must remove or rewrite one of "
		    "these paths; path one: [a], path two: [a, b, [2], c]" },
		{ 'P', "a.b.d.e, a.b", "", "",
		    "Invalid ProjectionExpression: Two document paths ove"
		    "rlap with each other; must remove or rewrite one of "
		    "these paths; path one: [a, b, d, e], path two: [a, b"
		    "]" },
		{ 'P', "a.b[0],a.b[0]", "", "",
		    "Invalid ProjectionExpression: Two document paths ove"
		    "rlap with each other; must remove or rewrite one of "
		    "these paths; path one: [a, b, [0]], path two: [a, b,"
		    " [0]]" },
		{ 'P', "a.b, a[1]", "", "",
		    "Invalid ProjectionExpression: Two document paths con"
		    "flict with each other; must remove or rewrite one of"
		    " these paths; path one: [a, b], path two: [a, [1]]" },
		{ 'P', "a[1], a.b", "", "",
		    "Invalid ProjectionExpression: Two document paths con"
		    "flict with each other; must remove or rewrite one of"
		    " these paths; path one: [a, [1]], path two: [a, b]" },
		{ 'P', "a.b[1], a.b.c", "", "",
		    "Invalid ProjectionExpression: Two document paths con"
		    "flict with each other; must remove or rewrite one of"
		    " these paths; path one: [a, b, [1]], path two: [a, b"
		    ", c]" },
		{ 'P', "a.b.c, a.b[1]", "", "",
		    "Invalid ProjectionExpression: Two document paths con"
		    "flict with each other; must remove or rewrite one of"
		    " these paths; path one: [a, b, c], path two: [a, b, "
		    "[1]]" },
		{ 'P', "a, b", "@", "", "" },
		{ 'P', "a.b, a.c", "@", "", "" },
		{ 'P', "a.b.d, a.b.e", "@", "", "" },
		{ 'P', "a[1], a[2]", "@", "", "" },
		{ 'P', "a.b, a.c[2]", "@", "", "" },
		{ 'P', "a.b, a.c[1]", "@", "", "" },
		{ 'P', " a  ,   b  ", "@", "", "" },
		{ 'P', "a.b[0],a.b[1]", "@", "", "" },
		{ 'P', "#n, #m", "@", "", "" },
		{ 'P', "#n", "#n=a.b", "", "" },
		{ 'P', "a.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b."
		    "b.b.b.b.b.b", "@", "", "" },
		{ 'P', "a.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b.b."
		    "b.b.b.b.b.b.b", "", "",
		    "Invalid ProjectionExpression: The document path has "
		    "too many nesting levels; nesting levels: 33" },
		{ 'U', "set b = list_append(:a, a), c = if_not_exists(a) add"
		    " a.b :a", "", ":a=\"a\";:b=\"a\"",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator: ADD, operand type: "
		    "STRING" },
		{ 'U', "delete a.b :a", "", ":a=\"a\";:b=\"a\"",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator: DELETE, operand typ"
		    "e: STRING" },
		{ 'U', "add a.b :a", "", ":a=null;:b=\"a\"",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator: ADD, operand type: "
		    "NULL" },
		{ 'U', "delete a.b :a", "", ":a=null;:b=\"a\"",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator: DELETE, operand typ"
		    "e: NULL" },
		{ 'U', "add a.b :a", "", ":a=false;:b=\"a\"",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator: ADD, operand type: "
		    "BOOLEAN" },
		{ 'U', "delete a.b :a", "", ":a=false;:b=\"a\"",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator: DELETE, operand typ"
		    "e: BOOLEAN" },
		{ 'U', "add a.b :a", "", ":a=b\"a\";:b=\"a\"",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator: ADD, operand type: "
		    "BINARY" },
		{ 'U', "delete a.b :a", "", ":a=b\"a\";:b=\"a\"",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator: DELETE, operand typ"
		    "e: BINARY" },
		{ 'U', "add a.b :a", "", ":a={a: [1]};:b=\"a\"",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator: ADD, operand type: "
		    "MAP" },
		{ 'U', "delete a.b :a", "", ":a={a: [1]};:b=\"a\"",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator: DELETE, operand typ"
		    "e: MAP" },
		{ 'U', "add a.b :a", "", ":a=[1];:b=\"a\"",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator: ADD, operand type: "
		    "LIST" },
		{ 'U', "delete a.b :a", "", ":a=[1];:b=\"a\"",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator: DELETE, operand typ"
		    "e: LIST" },
		{ 'U', "delete a.b :a", "", ":a=1;:b=\"a\"",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator: DELETE, operand typ"
		    "e: NUMBER" },
		{ 'U', "ADD a :n", "@",
		    ":n=1;:ss=SS(\"a\");:ns=NS(1);:bs=BS(b\"x\")", "" },
		{ 'U', "ADD a :ss", "@",
		    ":n=1;:ss=SS(\"a\");:ns=NS(1);:bs=BS(b\"x\")", "" },
		{ 'U', "ADD a :ns", "@",
		    ":n=1;:ss=SS(\"a\");:ns=NS(1);:bs=BS(b\"x\")", "" },
		{ 'U', "DELETE a :ss", "@",
		    ":n=1;:ss=SS(\"a\");:ns=NS(1);:bs=BS(b\"x\")", "" },
		{ 'U', "DELETE a :ns", "@",
		    ":n=1;:ss=SS(\"a\");:ns=NS(1);:bs=BS(b\"x\")", "" },
		{ 'U', "ADD a :bs", "@",
		    ":n=1;:ss=SS(\"a\");:ns=NS(1);:bs=BS(b\"x\")", "" },
		{ 'U', "DELETE a.b[1] :bs", "@",
		    ":n=1;:ss=SS(\"a\");:ns=NS(1);:bs=BS(b\"x\")", "" },
		{ 'U', "set a = if_not_exists(:a, c)", "", ":a=\"a\"",
		    "Invalid UpdateExpression: Operator or function requi"
		    "res a document path; operator or function: if_not_ex"
		    "ists" },
		{ 'U', "set a = if_not_exists(if_not_exists(a, b), c)", "", "",
		    "Invalid UpdateExpression: Operator or function requi"
		    "res a document path; operator or function: if_not_ex"
		    "ists" },
		{ 'U', "SET b = if_not_exists(:val2, :val1)", "",
		    ":val1=6;:val2=3",
		    "Invalid UpdateExpression: Operator or function requi"
		    "res a document path; operator or function: if_not_ex"
		    "ists" },
		{ 'U', "set a = list_append(:a, a)", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: list_ap"
		    "pend, operand type: S" },
		{ 'U', "set a = list_append(a, :b)", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: list_ap"
		    "pend, operand type: N" },
		{ 'U', "set a = list_append(:c, a)", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: list_ap"
		    "pend, operand type: B" },
		{ 'U', "set a = list_append(:d, a)", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: list_ap"
		    "pend, operand type: BOOL" },
		{ 'U', "set a = list_append(:e, a)", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: list_ap"
		    "pend, operand type: NULL" },
		{ 'U', "set a = list_append(:f, a)", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: list_ap"
		    "pend, operand type: SS" },
		{ 'U', "set a = list_append(:g, a)", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: list_ap"
		    "pend, operand type: NS" },
		{ 'U', "set a = list_append(:h, a)", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: list_ap"
		    "pend, operand type: BS" },
		{ 'U', "set a = list_append(:i, a)", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: list_ap"
		    "pend, operand type: M" },
		{ 'U', "set a = a + :a", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: +, oper"
		    "and type: S" },
		{ 'U', "set a = :a + :c", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: +, oper"
		    "and type: S" },
		{ 'U', "set a = :c + a", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: +, oper"
		    "and type: B" },
		{ 'U', "set a = a + :d", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: +, oper"
		    "and type: BOOL" },
		{ 'U', "set a = a + :e", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: +, oper"
		    "and type: NULL" },
		{ 'U', "set a = a + :f", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: +, oper"
		    "and type: SS" },
		{ 'U', "set a = a + :g", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: +, oper"
		    "and type: NS" },
		{ 'U', "set a = a + :h", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: +, oper"
		    "and type: BS" },
		{ 'U', "set a = a + :i", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: +, oper"
		    "and type: M" },
		{ 'U', "set a = a + :j", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: +, oper"
		    "and type: L" },
		{ 'U', "set a = a - :a", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: -, oper"
		    "and type: S" },
		{ 'U', "set a = :a - :c", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: -, oper"
		    "and type: S" },
		{ 'U', "set a = :c - a", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: -, oper"
		    "and type: B" },
		{ 'U', "set a = a - :d", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: -, oper"
		    "and type: BOOL" },
		{ 'U', "set a = a - :e", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: -, oper"
		    "and type: NULL" },
		{ 'U', "set a = a - :f", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: -, oper"
		    "and type: SS" },
		{ 'U', "set a = a - :g", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: -, oper"
		    "and type: NS" },
		{ 'U', "set a = a - :h", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: -, oper"
		    "and type: BS" },
		{ 'U', "set a = a - :i", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: -, oper"
		    "and type: M" },
		{ 'U', "set a = a - :j", "#a=a;#b=b",
		    ":a=\"a\";:b=1;:c=b\"a\";:d=true;:e=null;:f=SS(\"a\")"
		    ";:g=NS(1);:h=BS(b\"a\");:i={};:j=[]",
		    "Invalid UpdateExpression: Incorrect operand type for"
		    " operator or function; operator or function: -, oper"
		    "and type: L" },
		{ 'U', "SET a = :v", "@", "@", "" },
		{ 'U', "set b = :v", "@", "@", "" },
		{ 'U', "sEt b = :v", "@", "@", "" },
		{ 'U', "  set   b=:v  ", "@", "@", "" },
		{ 'U', "SET a = :v, b = :v", "@", "@", "" },
		{ 'U', "REMOVE a SET b = :v", "@", "@", "" },
		{ 'U', "SET c = :v REMOVE b", "@", "@", "" },
		{ 'U', "SET a = list_append(:l, :l)", "@", "@", "" },
		{ 'U', "SET a = list_append(a, :l)", "@", "@", "" },
		{ 'U', "SET a = if_not_exists(a, :v)", "@", "@", "" },
		{ 'U', "SET b = if_not_exists(b, :v)+:v", "@", "@", "" },
		{ 'U', "SET a = b + c", "@", "@", "" },
		{ 'U', "SET a = :v - a", "@", "@", "" },
		{ 'U', "SET a = :v + :w", "@", "@", "" },
		{ 'U', "ADD a :n", "@", "@", "" },
		{ 'U', "ADD s :ss", "@", "@", "" },
		{ 'U', "DELETE s :ss", "@", "@", "" },
		{ 'U', "ADD a :n, b :n", "@", "@", "" },
		{ 'U', "SET b.c=((c[1])+(b.a)),b.a = a,c[1] = a, c[4] = b.a "
		    "- b.b, c[2] = b.c add c[8] :ss, c[6] :n", "@", "@", "" },
		{ 'U', "SET a = (b)", "@", "@", "" },
		{ 'U', "SET a = ((b))", "@", "@", "" },
		{ 'U', "SET a = (b + c)", "@", "@", "" },
		{ 'U', "SET a = (b) + c", "@", "@", "" },
		{ 'U', "SET a = (b) - (c)", "@", "@", "" },
		{ 'U', "SET a = list_append(if_not_exists(a, :l), :l)", "@",
		    "@", "" },
		{ 'U', "SET a = if_not_exists(a, if_not_exists(b, :v))", "@",
		    "@", "" },
		{ 'U', "REMOVE a, b, c[1], d.e[2].f", "@", "@", "" },
		{ 'U', "remove a", "@", "@", "" },
		{ 'U', "ADD #n :n DELETE #m :ss", "@", "@", "" },
		{ 'U', "DELETE #m :ss ADD #n :n REMOVE c SET d = :v", "@", "@",
		    "" },
		{ 'U', "SET a.c[1].#n.y[1] = :v", "@", "@", "" },
		{ 'U', "SET a.z = a.c[1].#n.y[1]", "@", "@", "" },
		{ 'U', "SET #n = #m", "@", "@", "" },
		{ 'U', "SET a = a", "@", "@", "" },
		{ 'U', "SET a[84] = :v, a[37] = :w", "@", "@", "" },
		{ 'U', "SET a = :v + if_not_exists(b, :w)", "@", "@", "" },
		{ 'U', "SET a = list_append(:l, b)", "@", "@", "" },
	};

	return cr_make_param_array(
	    struct pcase, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct pcase *c, expr_parse, updates_and_projections)
{
	check(c->kind, c->expr, c->names, c->values, c->want);
}
