/*
 * expr_parse_test.c — tests of expression parsing and validation
 * (core/expr_parse.c, expr_check.c, expr_lex.c, expr.c): tables of valid
 * expressions and of invalid ones with DynamoDB's exact message, for
 * conditions, filters and key conditions (updates and projections are in
 * expr_parse_update_test.c), plus the placeholder context and the limits.
 *
 * Cases come from DynamoDB-verified test suites (dynalite's and
 * Alternator's); their format is described in expr_parse_util.h.
 */
#include "expr_parse_util.h"

ParameterizedTestParameters(expr_parse, conditions)
{
	static struct pcase cases[] = {
		{ 'C', "a = :v", "@", "@", "" },
		{ 'C', "a <> :v", "@", "@", "" },
		{ 'C', "a < :v", "@", "@", "" },
		{ 'C', "a <= :v", "@", "@", "" },
		{ 'C', "a > :v", "@", "@", "" },
		{ 'C', "a >= :v", "@", "@", "" },
		{ 'C', "a BETWEEN :lo AND :hi", "@", "@", "" },
		{ 'C', "a between :lo and :hi", "@", "@", "" },
		{ 'C', "a IN (:v)", "@", "@", "" },
		{ 'C', "a IN (:v, :w)", "@", "@", "" },
		{ 'C', "a in(:v,:w,:n)", "@", "@", "" },
		{ 'C', "attribute_exists(a)", "@", "@", "" },
		{ 'C', "attribute_exists (a)", "@", "@", "" },
		{ 'C', "attribute_not_exists(#n)", "@", "@", "" },
		{ 'C', "attribute_type(a, :t)", "@", "@", "" },
		{ 'C', "begins_with(a, :s)", "@", "@", "" },
		{ 'C', "contains(a, :v)", "@", "@", "" },
		{ 'C', "contains(a, :ss)", "@", "@", "" },
		{ 'C', "size(a) = :n", "@", "@", "" },
		{ 'C', "size(a)<>:n", "@", "@", "" },
		{ 'C', "size(a)<:n", "@", "@", "" },
		{ 'C', "size(a) BETWEEN :lo AND :hi", "@", "@", "" },
		{ 'C', "NOT a = :v", "@", "@", "" },
		{ 'C', "nOt a = :v", "@", "@", "" },
		{ 'C', "NOT NOT NOT NOT a = :v", "@", "@", "" },
		{ 'C', "a = :v AND b = :v", "@", "@", "" },
		{ 'C', "a = :v aNd b = :v", "@", "@", "" },
		{ 'C', "a = :v OR b = :v", "@", "@", "" },
		{ 'C', "a = :v oR b = :v", "@", "@", "" },
		{ 'C', "(a = :v OR b = :v) AND (c = :v AND (d = :v OR e = :v"
		    "))", "@", "@", "" },
		{ 'C', "(a)between(b.c.d)and(c)", "@", "@", "" },
		{ 'C', "(a) = :v", "@", "@", "" },
		{ 'C', "(a.b).c = :v", "@", "@", "" },
		{ 'C', "a.b[1].c = :v", "@", "@", "" },
		{ 'C', "#n.#m = :v", "@", "@", "" },
		{ 'C', "b BETWEEN a AND c AND a < b", "@", "@", "" },
		{ 'C', "attribute_type (:v, :t)", "@", "@", "" },
		{ 'C', "begins_with(:s, a)", "@", "@", "" },
		{ 'C', "contains(a, a1)", "@", "@", "" },
		{ 'C', ":v = :v", "@", "@", "" },
		{ 'C', "a = b", "@", "@", "" },
		{ 'C', "NOT (a = :v)", "@", "@", "" },
		{ 'C', "NOT attribute_exists(a)", "@", "@", "" },
		{ 'C', "a[0][1][2] = :v", "@", "@", "" },
		{ 'C', "a = :v AND b = :v OR c = :v AND NOT d = :v", "@", "@",
		    "" },
		{ 'C', "size(a) > size(b)", "@", "@", "" },
		{ 'C', "a IN (b, c, :v)", "@", "@", "" },
		{ 'C', "(a) IN ((b), :v)", "@", "@", "" },
		{ 'C', "  a   =   :v  ", "@", "@", "" },
		{ 'C', "a\t=\n:v", "@", "@", "" },
		{ 'C', "a=:v", "@", "@", "" },
		{ 'C', "Alpha_Numeric_123 = :v", "@", "@", "" },
		{ 'C', "A123_ = :v", "@", "@", "" },
		{ 'C', "a = :Alpha_Numeric_123", "@", "@", "" },
		{ 'C', "#n = :v", "@", "@", "" },
		{ 'C', "(attribute_exists(a))", "@", "@", "" },
		{ 'C', "NOT (NOT a = :v)", "@", "@", "" },
		{ 'C', "(size(a)) > :n", "@", "@", "" },
		{ 'C', "size((a)) > :n", "@", "@", "" },
		{ 'C', "contains((a), (:v))", "@", "@", "" },
		{ 'C', "a = (:v)", "@", "@", "" },
		{ 'C', "a", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "<EOF>\", near: \"a\"" },
		{ 'F', "things are not gonna be ok", "", "",
		    "Invalid FilterExpression: Syntax error; token: \"are"
		    "\", near: \"things are not\"" },
		{ 'K', "things are not gonna be ok", "", "",
		    "Invalid KeyConditionExpression: Syntax error; token:"
		    " \"are\", near: \"things are not\"" },
		{ 'C', "a > 4", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "4\", near: \"> 4\"" },
		{ 'C', "a-b", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "-\", near: \"a-b\"" },
		{ 'F', "a-b", "", "",
		    "Invalid FilterExpression: Syntax error; token: \"-\""
		    ", near: \"a-b\"" },
		{ 'C', "a = :v $", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "$\", near: \":v $\"" },
		{ 'C', "attribute_type()", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ")\", near: \"()\"" },
		{ 'K', "attribute_type()", "", "",
		    "Invalid KeyConditionExpression: Syntax error; token:"
		    " \")\", near: \"()\"" },
		{ 'C', "a IN ()", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ")\", near: \"()\"" },
		{ 'C', "a in (b,c,)", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ")\", near: \",)\"" },
		{ 'C', "a in b, c", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "b\", near: \"in b,\"" },
		{ 'C', "a in b", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "b\", near: \"in b\"" },
		{ 'C', "a > between", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "between\", near: \"> between\"" },
		{ 'C', "a = ", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "<EOF>\", near: \"=\"" },
		{ 'C', "a = :v AND", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "<EOF>\", near: \"AND\"" },
		{ 'C', "a == :v", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "=\", near: \"== :v\"" },
		{ 'C', "a => :v", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ">\", near: \"=> :v\"" },
		{ 'C', "a < > :v", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ">\", near: \"< > :v\"" },
		{ 'C', "a BETWEEN :v", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "<EOF>\", near: \":v\"" },
		{ 'C', "a BETWEEN :v OR :v", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "OR\", near: \":v OR :v\"" },
		{ 'C', "NOT", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "<EOF>\", near: \"NOT\"" },
		{ 'C', "NOT a", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "<EOF>\", near: \"a\"" },
		{ 'C', "(a = :v", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "<EOF>\", near: \":v\"" },
		{ 'C', "a = :v)", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ")\", near: \":v)\"" },
		{ 'C', "a.:b < c", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ":b\", near: \".:b <\"" },
		{ 'C', "attribute_exists(Pictures-RearView)", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "-\", near: \"Pictures-RearView\"" },
		{ 'C', "attribute_exists(\"Pictures.RearView\")", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "\"\", near: \"(\"Pictures\"" },
		{ 'C', "attribute_exists(Pictures..RearView)", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ".\", near: \"..RearView\"" },
		{ 'C', "attribute_exists(Pi#ctures.RearView)", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "#ctures\", near: \"Pi#ctures.\"" },
		{ 'C', "attribute_exists(asdf[a])", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "a\", near: \"[a]\"" },
		{ 'C', "#$.b > a", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "#\", near: \"#$\"" },
		{ 'C', "# > a", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "#\", near: \"# >\"" },
		{ 'C', "a > :", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ":\", near: \"> :\"" },
		{ 'C', "\xc3\xbc > a", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "\xc3\xbc\", near: \"\xc3\xbc >\"" },
		{ 'C', "size(a).b > a", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ".\", near: \").b\"" },
		{ 'C', "(size(a)).b > a", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ".\", near: \").b\"" },
		{ 'C', "size(a)[0] > a", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "[\", near: \")[0\"" },
		{ 'C', "(a)between(b.(c.d))and(c)", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "(\", near: \".(c\"" },
		{ 'C', "(a)between(b.c.d)and((c)", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "<EOF>\", near: \")\"" },
		{ 'C', "(a)between(b.c[4.5].#d)and(:a)", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ".\", near: \"4.5\"" },
		{ 'C', "b[:a] > a", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ":a\", near: \"[:a]\"" },
		{ 'C', "b[#_] > a", "", "",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "#_\", near: \"[#_]\"" },
		{ 'C', "a > :things.stuff", "", ":things=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    ".\", near: \":things.stuff\"" },
		{ 'C', "a = :v AND OR b = :v", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "OR\", near: \"AND OR b\"" },
		{ 'C', "a AND b = :v", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "AND\", near: \"a AND b\"" },
		{ 'C', "a OR b = :v", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "OR\", near: \"a OR b\"" },
		{ 'C', "a = :v b", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "b\", near: \":v b\"" },
		{ 'C', "a[99999999999] = :v", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "99999999999\", near: \"[99999999999]\"" },
		{ 'C', "_a = :v", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "_\", near: \"_a\"" },
		{ 'C', "1a = :v", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "1\", near: \"1a\"" },
		{ 'C', "and = :v", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "and\", near: \"and =\"" },
		{ 'C', "a = (:v = :v)", "", ":v=1",
		    "Invalid ConditionExpression: Syntax error; token: \""
		    "=\", near: \":v = :v\"" },
		{ 'C', "", "", "",
		    "Invalid ConditionExpression: The expression can not "
		    "be empty;" },
		{ 'C', "   ", "", "",
		    "Invalid ConditionExpression: The expression can not "
		    "be empty;" },
		{ 'C', " \t\n", "", "",
		    "Invalid ConditionExpression: The expression can not "
		    "be empty;" },
		{ 'F', "", "", "",
		    "Invalid FilterExpression: The expression can not be "
		    "empty;" },
		{ 'F', "   ", "", "",
		    "Invalid FilterExpression: The expression can not be "
		    "empty;" },
		{ 'F', " \t\n", "", "",
		    "Invalid FilterExpression: The expression can not be "
		    "empty;" },
		{ 'K', "", "", "",
		    "Invalid KeyConditionExpression: The expression can n"
		    "ot be empty;" },
		{ 'K', "   ", "", "",
		    "Invalid KeyConditionExpression: The expression can n"
		    "ot be empty;" },
		{ 'K', " \t\n", "", "",
		    "Invalid KeyConditionExpression: The expression can n"
		    "ot be empty;" },
		{ 'C', "status = :v", "", ":v=1",
		    "Invalid ConditionExpression: Attribute name is a res"
		    "erved keyword; reserved keyword: status" },
		{ 'C', "a.Status = :v", "", ":v=1",
		    "Invalid ConditionExpression: Attribute name is a res"
		    "erved keyword; reserved keyword: Status" },
		{ 'C', "SIZE > :v", "", ":v=1",
		    "Invalid ConditionExpression: Attribute name is a res"
		    "erved keyword; reserved keyword: SIZE" },
		{ 'F', "attribute_exists(views, #a)", "", "",
		    "Invalid FilterExpression: Attribute name is a reserv"
		    "ed keyword; reserved keyword: views" },
		{ 'F', ":a < abOrT", "", "",
		    "Invalid FilterExpression: Attribute name is a reserv"
		    "ed keyword; reserved keyword: abOrT" },
		{ 'C', "#n = :v", "#n=status", ":v=1", "" },
		{ 'C', "#x = :v", "", ":v=1",
		    "Invalid ConditionExpression: An expression attribute"
		    " name used in the document path is not defined; attr"
		    "ibute name: #x" },
		{ 'C', "a = :nope", "", ":v=1",
		    "Invalid ConditionExpression: An expression attribute"
		    " value used in expression is not defined; attribute "
		    "value: :nope" },
		{ 'F', "attribute_exists(#Pictures.RearView, :a) and a=a", "",
		    "", "Invalid FilterExpression: An expression attribute na"
		    "me used in the document path is not defined; attribu"
		    "te name: #Pictures" },
		{ 'F', "begins_with(Pictures.#RearView)", "", "",
		    "Invalid FilterExpression: An expression attribute na"
		    "me used in the document path is not defined; attribu"
		    "te name: #RearView" },
		{ 'F', "(#P between :lo and :hi) and (#PC in (:cat1, :cat2))",
		    "", "",
		    "Invalid FilterExpression: An expression attribute na"
		    "me used in the document path is not defined; attribu"
		    "te name: #P" },
		{ 'F', "#4g > a", "", "",
		    "Invalid FilterExpression: An expression attribute na"
		    "me used in the document path is not defined; attribu"
		    "te name: #4g" },
		{ 'F', "#_ > a", "", "",
		    "Invalid FilterExpression: An expression attribute na"
		    "me used in the document path is not defined; attribu"
		    "te name: #_" },
		{ 'F', "(a)between(b.c[45].#d)and(:a)", "", "",
		    "Invalid FilterExpression: An expression attribute na"
		    "me used in the document path is not defined; attribu"
		    "te name: #d" },
		{ 'F', "begins_with(:hello, #a, #b)", "", "",
		    "Invalid FilterExpression: An expression attribute va"
		    "lue used in expression is not defined; attribute val"
		    "ue: :hello" },
		{ 'F', ":a < :b", "", "",
		    "Invalid FilterExpression: An expression attribute va"
		    "lue used in expression is not defined; attribute val"
		    "ue: :a" },
		{ 'F', ":_ > a", "", "",
		    "Invalid FilterExpression: An expression attribute va"
		    "lue used in expression is not defined; attribute val"
		    "ue: :_" },
		{ 'F', "a=a and a > ((views))", "", ":v=1",
		    "Invalid FilterExpression: The expression has redunda"
		    "nt parentheses;" },
		{ 'F', "(a)between(((b.c)).d)and(c)", "", ":v=1",
		    "Invalid FilterExpression: The expression has redunda"
		    "nt parentheses;" },
		{ 'F', "a > whatever((:things), ((a)))", "", ":v=1",
		    "Invalid FilterExpression: The expression has redunda"
		    "nt parentheses;" },
		{ 'F', "a=a AND ((a=a AND a=a)) AND a=a", "", ":v=1",
		    "Invalid FilterExpression: The expression has redunda"
		    "nt parentheses;" },
		{ 'F', "a=a OR ((a=a OR a=a)) OR a=a", "", ":v=1",
		    "Invalid FilterExpression: The expression has redunda"
		    "nt parentheses;" },
		{ 'F', "a=a AND ((a=a AND (a=a AND a=a)))", "", ":v=1",
		    "Invalid FilterExpression: The expression has redunda"
		    "nt parentheses;" },
		{ 'F', "a=a OR ((a=a OR (a=a OR a=a)))", "", ":v=1",
		    "Invalid FilterExpression: The expression has redunda"
		    "nt parentheses;" },
		{ 'F', "((a = :v))", "", ":v=1",
		    "Invalid FilterExpression: The expression has redunda"
		    "nt parentheses;" },
		{ 'F', "NOT ((a = b))", "", ":v=1",
		    "Invalid FilterExpression: The expression has redunda"
		    "nt parentheses;" },
		{ 'F', "((a)) = b", "", ":v=1",
		    "Invalid FilterExpression: The expression has redunda"
		    "nt parentheses;" },
		{ 'F', "((attribute_exists(a)))", "", ":v=1",
		    "Invalid FilterExpression: The expression has redunda"
		    "nt parentheses;" },
		{ 'F', "a=a and whatever((:things)) > a", "", "",
		    "Invalid FilterExpression: Invalid function name; fun"
		    "ction: whatever" },
		{ 'F', "attRIbute_exIsts((views), #a)", "", "",
		    "Invalid FilterExpression: Invalid function name; fun"
		    "ction: attRIbute_exIsts" },
		{ 'C', "dog(a)=:arg", "", ":arg=5",
		    "Invalid ConditionExpression: Invalid function name; "
		    "function: dog" },
		{ 'C', "ATTRIBUTE_EXISTS(a)", "", "",
		    "Invalid ConditionExpression: Invalid function name; "
		    "function: ATTRIBUTE_EXISTS" },
		{ 'C', "f(g(a)) = :v", "", ":v=1",
		    "Invalid ConditionExpression: Invalid function name; "
		    "function: g" },
		{ 'C', "if_not_exists(a, a)=:arg", "", ":arg=5",
		    "Invalid ConditionExpression: The function is not all"
		    "owed in a condition expression; function: if_not_exi"
		    "sts" },
		{ 'C', "list_append(a, a)=:arg", "", ":arg=5",
		    "Invalid ConditionExpression: The function is not all"
		    "owed in a condition expression; function: list_appen"
		    "d" },
		{ 'F', "a=a and attribute_exists((views), (#a)) > b", "",
		    ":v=1",
		    "Invalid FilterExpression: The function is not allowe"
		    "d to be used this way in an expression; function: at"
		    "tribute_exists" },
		{ 'F', "attribute_not_exists(things) > b", "", ":v=1",
		    "Invalid FilterExpression: The function is not allowe"
		    "d to be used this way in an expression; function: at"
		    "tribute_not_exists" },
		{ 'F', "attribute_type(things, :a) > b", "", ":v=1",
		    "Invalid FilterExpression: The function is not allowe"
		    "d to be used this way in an expression; function: at"
		    "tribute_type" },
		{ 'F', "begins_with(things, a) > b", "", ":v=1",
		    "Invalid FilterExpression: The function is not allowe"
		    "d to be used this way in an expression; function: be"
		    "gins_with" },
		{ 'F', "contains(:things, c) > b", "", ":v=1",
		    "Invalid FilterExpression: The function is not allowe"
		    "d to be used this way in an expression; function: co"
		    "ntains" },
		{ 'F', "size(contains(a, b)) > a", "", ":v=1",
		    "Invalid FilterExpression: The function is not allowe"
		    "d to be used this way in an expression; function: co"
		    "ntains" },
		{ 'F', "size(things)", "", ":v=1",
		    "Invalid FilterExpression: The function is not allowe"
		    "d to be used this way in an expression; function: si"
		    "ze" },
		{ 'F', "NOT size(a)", "", ":v=1",
		    "Invalid FilterExpression: The function is not allowe"
		    "d to be used this way in an expression; function: si"
		    "ze" },
		{ 'F', "a = :v AND size(a)", "", ":v=1",
		    "Invalid FilterExpression: The function is not allowe"
		    "d to be used this way in an expression; function: si"
		    "ze" },
		{ 'F', "a between b and attribute_exists(things)", "", ":v=1",
		    "Invalid FilterExpression: The function is not allowe"
		    "d to be used this way in an expression; function: at"
		    "tribute_exists" },
		{ 'F', "a in (b, attribute_exists(things))", "", ":v=1",
		    "Invalid FilterExpression: The function is not allowe"
		    "d to be used this way in an expression; function: at"
		    "tribute_exists" },
		{ 'F', "attribute_exists(a) < :v", "", ":v=1",
		    "Invalid FilterExpression: The function is not allowe"
		    "d to be used this way in an expression; function: at"
		    "tribute_exists" },
		{ 'F', "attribute_exists(things, a) and a=a", "", "",
		    "Invalid FilterExpression: Incorrect number of operan"
		    "ds for operator or function; operator or function: a"
		    "ttribute_exists, number of operands: 2" },
		{ 'F', "attribute_not_exists(things, b)", "", "",
		    "Invalid FilterExpression: Incorrect number of operan"
		    "ds for operator or function; operator or function: a"
		    "ttribute_not_exists, number of operands: 2" },
		{ 'F', "attribute_type(things)", "", "",
		    "Invalid FilterExpression: Incorrect number of operan"
		    "ds for operator or function; operator or function: a"
		    "ttribute_type, number of operands: 1" },
		{ 'F', "begins_with(things)", "", "",
		    "Invalid FilterExpression: Incorrect number of operan"
		    "ds for operator or function; operator or function: b"
		    "egins_with, number of operands: 1" },
		{ 'F', "begins_with(things, size(a), b)", "", "",
		    "Invalid FilterExpression: Incorrect number of operan"
		    "ds for operator or function; operator or function: b"
		    "egins_with, number of operands: 3" },
		{ 'F', "contains(things)", "", "",
		    "Invalid FilterExpression: Incorrect number of operan"
		    "ds for operator or function; operator or function: c"
		    "ontains, number of operands: 1" },
		{ 'F', "size(things, a) > b", "", "",
		    "Invalid FilterExpression: Incorrect number of operan"
		    "ds for operator or function; operator or function: s"
		    "ize, number of operands: 2" },
		{ 'F', "attribute_type(a, size(a)) and a=a and a=:a", "",
		    ":a=1",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: attribu"
		    "te_type, operand type: N" },
		{ 'F', "attribute_type(a, :a)", "", ":a=1",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: attribu"
		    "te_type, operand type: N" },
		{ 'F', "attribute_type(a, :a)", "", ":a=b\"a\"",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: attribu"
		    "te_type, operand type: B" },
		{ 'F', "attribute_type(a, :a)", "", ":a=true",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: attribu"
		    "te_type, operand type: BOOL" },
		{ 'F', "attribute_type(a, :a)", "", ":a=null",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: attribu"
		    "te_type, operand type: NULL" },
		{ 'F', "attribute_type(a, :a)", "", ":a=[]",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: attribu"
		    "te_type, operand type: L" },
		{ 'F', "attribute_type(a, :a)", "", ":a={}",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: attribu"
		    "te_type, operand type: M" },
		{ 'F', "attribute_type(a, :a)", "", ":a=SS(\"1\")",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: attribu"
		    "te_type, operand type: SS" },
		{ 'F', "attribute_type(a, :a)", "", ":a=NS(1)",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: attribu"
		    "te_type, operand type: NS" },
		{ 'F', "attribute_type(a, :a)", "", ":a=BS(b\"a\")",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: attribu"
		    "te_type, operand type: BS" },
		{ 'F', "attribute_type(a, b)", "", "",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: attribu"
		    "te_type, operand type: {NS,SS,L,BS,N,M,B,BOOL,NULL,S"
		    "}" },
		{ 'F', "begins_with(a, size(a)) and a=:a", "", ":a=1",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: N" },
		{ 'F', "begins_with(a, :a)", "", ":a=1",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: N" },
		{ 'F', "begins_with(:a, a)", "", ":a=1",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: N" },
		{ 'F', "begins_with(a, :a)", "", ":a=true",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: BOOL" },
		{ 'F', "begins_with(:a, a)", "", ":a=true",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: BOOL" },
		{ 'F', "begins_with(a, :a)", "", ":a=null",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: NULL" },
		{ 'F', "begins_with(:a, a)", "", ":a=null",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: NULL" },
		{ 'F', "begins_with(a, :a)", "", ":a=[]",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: L" },
		{ 'F', "begins_with(:a, a)", "", ":a=[]",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: L" },
		{ 'F', "begins_with(a, :a)", "", ":a={}",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: M" },
		{ 'F', "begins_with(:a, a)", "", ":a={}",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: M" },
		{ 'F', "begins_with(a, :a)", "", ":a=SS(\"1\")",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: SS" },
		{ 'F', "begins_with(:a, a)", "", ":a=SS(\"1\")",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: SS" },
		{ 'F', "begins_with(a, :a)", "", ":a=NS(1)",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: NS" },
		{ 'F', "begins_with(:a, a)", "", ":a=NS(1)",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: NS" },
		{ 'F', "begins_with(a, :a)", "", ":a=BS(b\"a\")",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: BS" },
		{ 'F', "begins_with(:a, a)", "", ":a=BS(b\"a\")",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: begins_"
		    "with, operand type: BS" },
		{ 'F', "size(size(a)) > :a", "", ":a=1",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: size, o"
		    "perand type: N" },
		{ 'F', "attribute_not_exists(size(:a))", "", ":a=1",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: size, o"
		    "perand type: N" },
		{ 'F', "size(:a) > a", "", ":a=true",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: size, o"
		    "perand type: BOOL" },
		{ 'F', "size(:a) > a", "", ":a=null",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: size, o"
		    "perand type: NULL" },
		{ 'F', "attribute_type(a, :a)", "", ":a=\"1\"",
		    "Invalid FilterExpression: Invalid attribute type nam"
		    "e found; type: 1, valid types: {B,NULL,SS,BOOL,L,BS,"
		    "N,NS,S,M}" },
		{ 'C', "attribute_type(a, :t)", "", ":t=\"DOG\"",
		    "Invalid ConditionExpression: Invalid attribute type "
		    "name found; type: DOG, valid types: {B,NULL,SS,BOOL,"
		    "L,BS,N,NS,S,M}" },
		{ 'C', "attribute_type(a, :t)", "", ":t=\"s\"",
		    "Invalid ConditionExpression: Invalid attribute type "
		    "name found; type: s, valid types: {B,NULL,SS,BOOL,L,"
		    "BS,N,NS,S,M}" },
		{ 'F', "attribute_exists(:a) and a=a", "", ":a=\"1\"",
		    "Invalid FilterExpression: Operator or function requi"
		    "res a document path; operator or function: attribute"
		    "_exists" },
		{ 'F', "attribute_not_exists(size(:a))", "", ":a=\"1\"",
		    "Invalid FilterExpression: Operator or function requi"
		    "res a document path; operator or function: attribute"
		    "_not_exists" },
		{ 'C', "n < :v", "", ":v=true",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: <, o"
		    "perand type: BOOL" },
		{ 'C', "n < :v", "", ":v=null",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: <, o"
		    "perand type: NULL" },
		{ 'C', "n < :v", "", ":v=SS(\"1\")",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: <, o"
		    "perand type: SS" },
		{ 'C', "n < :v", "", ":v=NS(1)",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: <, o"
		    "perand type: NS" },
		{ 'C', "n < :v", "", ":v=[]",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: <, o"
		    "perand type: L" },
		{ 'C', "n < :v", "", ":v={}",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: <, o"
		    "perand type: M" },
		{ 'C', "n <= :v", "", ":v=true",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: <=, "
		    "operand type: BOOL" },
		{ 'C', "n <= :v", "", ":v=null",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: <=, "
		    "operand type: NULL" },
		{ 'C', "n <= :v", "", ":v=SS(\"1\")",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: <=, "
		    "operand type: SS" },
		{ 'C', "n <= :v", "", ":v=NS(1)",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: <=, "
		    "operand type: NS" },
		{ 'C', "n <= :v", "", ":v=[]",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: <=, "
		    "operand type: L" },
		{ 'C', "n <= :v", "", ":v={}",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: <=, "
		    "operand type: M" },
		{ 'C', "n > :v", "", ":v=true",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >, o"
		    "perand type: BOOL" },
		{ 'C', "n > :v", "", ":v=null",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >, o"
		    "perand type: NULL" },
		{ 'C', "n > :v", "", ":v=SS(\"1\")",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >, o"
		    "perand type: SS" },
		{ 'C', "n > :v", "", ":v=NS(1)",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >, o"
		    "perand type: NS" },
		{ 'C', "n > :v", "", ":v=[]",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >, o"
		    "perand type: L" },
		{ 'C', "n > :v", "", ":v={}",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >, o"
		    "perand type: M" },
		{ 'C', "n >= :v", "", ":v=true",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >=, "
		    "operand type: BOOL" },
		{ 'C', "n >= :v", "", ":v=null",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >=, "
		    "operand type: NULL" },
		{ 'C', "n >= :v", "", ":v=SS(\"1\")",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >=, "
		    "operand type: SS" },
		{ 'C', "n >= :v", "", ":v=NS(1)",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >=, "
		    "operand type: NS" },
		{ 'C', "n >= :v", "", ":v=[]",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >=, "
		    "operand type: L" },
		{ 'C', "n >= :v", "", ":v={}",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >=, "
		    "operand type: M" },
		{ 'C', ":x > :v", "", ":x=1;:v=true",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >, o"
		    "perand type: BOOL" },
		{ 'C', ":v > :x", "", ":x=1;:v=true",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >, o"
		    "perand type: BOOL" },
		{ 'C', "size(s) > :v", "", ":v=true",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >, o"
		    "perand type: BOOL" },
		{ 'C', "attribute_not_exists(zzz) OR n > :v", "", ":v=true",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >, o"
		    "perand type: BOOL" },
		{ 'C', "NOT (n > :v)", "", ":v=true",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: >, o"
		    "perand type: BOOL" },
		{ 'F', "n > :v", "", ":v=true",
		    "Invalid FilterExpression: Incorrect operand type for"
		    " operator or function; operator or function: >, oper"
		    "and type: BOOL" },
		{ 'C', "n BETWEEN :a AND :b", "", ":a=true;:b=false",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: BETW"
		    "EEN, operand type: BOOL" },
		{ 'C', ":a BETWEEN n AND m", "", ":a=[]",
		    "Invalid ConditionExpression: Incorrect operand type "
		    "for operator or function; operator or function: BETW"
		    "EEN, operand type: L" },
		{ 'C', "n = :v", "@", ":v=true", "" },
		{ 'C', "n = :v", "@", ":v=null", "" },
		{ 'C', "n = :v", "@", ":v=SS(\"1\")", "" },
		{ 'C', "n = :v", "@", ":v=[]", "" },
		{ 'C', "n = :v", "@", ":v={}", "" },
		{ 'C', "n <> :v", "@", ":v=true", "" },
		{ 'C', "n <> :v", "@", ":v=null", "" },
		{ 'C', "n <> :v", "@", ":v=SS(\"1\")", "" },
		{ 'C', "n <> :v", "@", ":v=[]", "" },
		{ 'C', "n <> :v", "@", ":v={}", "" },
		{ 'C', "a IN (:v, :w)", "@", ":v=true;:w=[1]", "" },
		{ 'K', "a between :b and :a", "", ":a=\"a\";:b=1",
		    "Invalid KeyConditionExpression: The BETWEEN operator"
		    " requires same data type for lower and upper bounds;"
		    " lower bound operand: AttributeValue: {N:1}, upper b"
		    "ound operand: AttributeValue: {S:a}" },
		{ 'K', "a between :b and :a", "", ":a=\"a\";:b=\"b\"",
		    "Invalid KeyConditionExpression: The BETWEEN operator"
		    " requires upper bound to be greater than or equal to"
		    " lower bound; lower bound operand: AttributeValue: {"
		    "S:b}, upper bound operand: AttributeValue: {S:a}" },
		{ 'C', "a BETWEEN :hi AND :lo", "", ":hi=5;:lo=2",
		    "Invalid ConditionExpression: The BETWEEN operator re"
		    "quires upper bound to be greater than or equal to lo"
		    "wer bound; lower bound operand: AttributeValue: {N:5"
		    "}, upper bound operand: AttributeValue: {N:2}" },
		{ 'F', "n BETWEEN :hi AND :lo", "", ":hi=10;:lo=1",
		    "Invalid FilterExpression: The BETWEEN operator requi"
		    "res upper bound to be greater than or equal to lower"
		    " bound; lower bound operand: AttributeValue: {N:10},"
		    " upper bound operand: AttributeValue: {N:1}" },
		{ 'C', "a BETWEEN :hi AND :lo", "", ":hi=b\"b\";:lo=b\"a\"",
		    "Invalid ConditionExpression: The BETWEEN operator re"
		    "quires upper bound to be greater than or equal to lo"
		    "wer bound; lower bound operand: AttributeValue: {B:Y"
		    "g==}, upper bound operand: AttributeValue: {B:YQ==}" },
		{ 'C', "a BETWEEN :v AND :v", "@", ":v=1", "" },
		{ 'C', "a BETWEEN b AND :v", "@", ":v=1", "" },
		{ 'F', "a = a AND #a = b AND :views > a", "#a=a", "",
		    "Invalid FilterExpression: The first operand must be "
		    "distinct from the remaining operands for this operat"
		    "or or function; operator: =, first operand: [a]" },
		{ 'F', "#a <> a", "#a=a", "",
		    "Invalid FilterExpression: The first operand must be "
		    "distinct from the remaining operands for this operat"
		    "or or function; operator: <>, first operand: [a]" },
		{ 'F', "a > #a", "#a=a", "",
		    "Invalid FilterExpression: The first operand must be "
		    "distinct from the remaining operands for this operat"
		    "or or function; operator: >, first operand: [a]" },
		{ 'F', "((a=a) OR (a=a))", "#a=a", "",
		    "Invalid FilterExpression: The first operand must be "
		    "distinct from the remaining operands for this operat"
		    "or or function; operator: =, first operand: [a]" },
		{ 'F', "((a=a) AND (a=a))", "#a=a", "",
		    "Invalid FilterExpression: The first operand must be "
		    "distinct from the remaining operands for this operat"
		    "or or function; operator: =, first operand: [a]" },
		{ 'F', "contains(ab.bc[1].a, ab.bc[1].#a)", "#a=a", "",
		    "Invalid FilterExpression: The first operand must be "
		    "distinct from the remaining operands for this operat"
		    "or or function; operator: contains, first operand: ["
		    "ab, bc, [1], a]" },
		{ 'F', "attribute_type(ab.bc[1].#a, ab.bc[1].a)", "#a=a", "",
		    "Invalid FilterExpression: The first operand must be "
		    "distinct from the remaining operands for this operat"
		    "or or function; operator: attribute_type, first oper"
		    "and: [ab, bc, [1], a]" },
		{ 'F', "begins_with(ab.bc[1].a, ab.bc[1].#a)", "#a=a", "",
		    "Invalid FilterExpression: The first operand must be "
		    "distinct from the remaining operands for this operat"
		    "or or function; operator: begins_with, first operand"
		    ": [ab, bc, [1], a]" },
		{ 'C', "contains(a, a)", "", "",
		    "Invalid ConditionExpression: The first operand must "
		    "be distinct from the remaining operands for this ope"
		    "rator or function; operator: contains, first operand"
		    ": [a]" },
		{ 'C', "a.b = a.c", "@", "@", "" },
		{ 'C', "a[0] = a[1]", "@", "@", "" },
		{ 'C', "a[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]"
		    "[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0] = :v", "",
		    ":v=1",
		    "Invalid ConditionExpression: The document path has t"
		    "oo many nesting levels; nesting levels: 33" },
		{ 'C', "a[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]"
		    "[0][0][0][0][0][0][0][0][0][0][0][0][0][0] = :v", "@",
		    ":v=1", "" },
	};

	return cr_make_param_array(
	    struct pcase, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct pcase *c, expr_parse, conditions)
{
	check(c->kind, c->expr, c->names, c->values, c->want);
}

/* ---- limits ---------------------------------------------------------- */

/* sized returns pre + "a" + "zzz..." + post, n bytes in all. */
static char *
sized(arena *a, const char *pre, const char *post, size_t n)
{
	char *s = arena_alloc(a, n + 1);
	size_t lp = strlen(pre), lq = strlen(post);

	memcpy(s, pre, lp);
	s[lp] = 'a';
	memset(s + lp + 1, 'z', n - lp - lq - 1);
	memcpy(s + n - lq, post, lq);
	s[n] = '\0';
	return s;
}

Test(expr_parse, size_limit_is_4096_bytes)
{
	static const struct {
		char kind;
		const char *pre, *post, *suffix;
	} k[] = {
		{ 'P', "", "", "" },
		{ 'U', "SET ", " = :v", "" },
		{ 'K', "", " = :v", "" },
		{ 'C', "attribute_not_exists(", ")",
		    " expression size: 4097" },
		{ 'F', "", " = :v", " expression size: 4097" },
	};
	static const char *const names[] = {
		['P'] = "Projection", ['U'] = "Update", ['K'] = "KeyCondition",
		['C'] = "Condition", ['F'] = "Filter",
	};
	arena a;
	size_t i;

	arena_init(&a);
	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		char want[256];

		check(k[i].kind, sized(&a, k[i].pre, k[i].post, 4096), "",
		    ":v=1", "");
		snprintf(want, sizeof(want), "Invalid %sExpression: "
		    "Expression size has exceeded the maximum allowed size;%s",
		    names[(int) k[i].kind], k[i].suffix);
		check(k[i].kind, sized(&a, k[i].pre, k[i].post, 4097), "",
		    ":v=1", want);
	}
	check('C', sized(&a, "", " = :v", 9000), "", ":v=1",
	    "Invalid ConditionExpression: Expression size has exceeded the "
	    "maximum allowed size; expression size: 9000");
	arena_fini(&a);
}

/* repeat joins n copies of item with sep, between pre and post. */
static char *
repeat(arena *a, const char *pre, const char *item, const char *sep,
    size_t n, const char *post)
{
	size_t cap = strlen(pre) + n * (strlen(item) + strlen(sep) + 8) +
	    strlen(post) + 1;
	char *s = arena_alloc(a, cap), *p = s;
	size_t i;

	p += sprintf(p, "%s", pre);
	for (i = 0; i < n; i++)
		p += sprintf(p, item, (int) i, (int) i);
	(void) sep;
	sprintf(p, "%s", post);
	return s;
}

Test(expr_parse, conditions_have_at_most_300_operators)
{
	arena a;
	char *c150;

	arena_init(&a);
	/* 150 comparisons and 149 ANDs: 299 operators. */
	c150 = repeat(&a, "a = :v", " AND a = :v", "", 149, "");
	check('C', c150, "", ":v=1", "");
	check('C', repeat(&a, "NOT ", "", "", 0, c150), "", ":v=1", "");
	check('C', repeat(&a, "NOT NOT ", "", "", 0, c150), "", ":v=1",
	    "Invalid ConditionExpression: The expression contains too many "
	    "operators; number of operators: 301");
	check('F', repeat(&a, "attribute_exists(a)", " OR size(a) > :v", "",
		       100, ""),
	    "", ":v=1",
	    "Invalid FilterExpression: The expression contains too many "
	    "operators; number of operators: 301");
	arena_fini(&a);
}

Test(expr_parse, updates_have_at_most_300_operators)
{
	arena a;

	arena_init(&a);
	check('U', repeat(&a, "SET z=:v", ",a%d=:v+:v", "", 300, ""), "",
	    ":v=1", "");
	check('U', repeat(&a, "SET z=:v+:v", ",a%d=:v+:v", "", 300, ""), "",
	    ":v=1",
	    "Invalid UpdateExpression: The expression contains too many "
	    "operators; number of operators: 301");
	check('U', repeat(&a, "SET z=:v", ",a%d=if_not_exists(b%d,:v)", "",
		       150, ""),
	    "", ":v=1", "");
	arena_fini(&a);
}

Test(expr_parse, in_takes_at_most_100_operands)
{
	arena a;
	char *vals = NULL, *p;
	int i;

	arena_init(&a);
	vals = arena_alloc(&a, 2000);
	p = vals;
	for (i = 0; i < 100; i++)
		p += sprintf(p, "%s:v%d=%d", i ? ";" : "", i, i);
	/* The left operand and 99 in the list: 100 operands. */
	check('C', repeat(&a, "a IN (:v99", ", :v%d", "", 98, ")"), "",
	    vals, "");
	check('C', repeat(&a, "a IN (:v99", ", :v%d", "", 99, ")"), "",
	    vals,
	    "Invalid ConditionExpression: The IN operator is provided with "
	    "too many operands; number of operands: 101");
	arena_fini(&a);
}

Test(expr_parse, nesting_is_bounded)
{
	arena a;
	char *s;

	arena_init(&a);
	s = repeat(&a, "", "(", "", EXPR_MAX_NESTING, "a = :v");
	s = repeat(&a, s, ")", "", EXPR_MAX_NESTING, "");
	check('C', s, "", ":v=1",
	    "Invalid ConditionExpression: The expression has redundant "
	    "parentheses;");
	s = repeat(&a, "a = :v AND ", "(", "", EXPR_MAX_NESTING + 1,
	    "a = :v");
	s = repeat(&a, s, ")", "", EXPR_MAX_NESTING + 1, "");
	check('C', s, "", ":v=1",
	    "Invalid ConditionExpression: Syntax error; token: \"(\", near: "
	    "\"((a\"");
	s = repeat(&a, "", "(a = :v AND ", "", 100, "b = :v");
	s = repeat(&a, s, ")", "", 100, "");
	check('C', s, "", ":v=1", "");
	s = repeat(&a, "", "size(", "", 200, "a");
	s = repeat(&a, s, ")", "", 200, " = :v");
	check('C', s, "", ":v=1",
	    "Invalid ConditionExpression: Incorrect operand type for operator "
	    "or function; operator or function: size, operand type: N");
	s = repeat(&a, "", "NOT ", "", 280, "a = :v");
	check('C', s, "", ":v=1", "");
	arena_fini(&a);
}

/* ---- the placeholder context ------------------------------------------ */

static void
keys_case(const char *names, const char *values, const char *want)
{
	expr_err err;
	arena a;
	kv_err e;

	arena_init(&a);
	err.msg[0] = '\0';
	e = expr_ctx_check_keys(ctx_make(&a, names, values), &err);
	if (want == NULL) {
		cr_expect_eq(e, KV_OK, "%s %s: %s", names, values, err.msg);
	} else {
		cr_expect_eq(e, KV_EINVAL, "%s %s", names, values);
		cr_expect_str_eq(err.msg, want);
	}
	arena_fini(&a);
}

Test(expr_parse, context_keys_are_checked)
{
	keys_case("#a=a;#Z_9=b;#_=c;#0=d", ":a=1;:_=2;:9Z=3", NULL);
	keys_case("a=a", "", "ExpressionAttributeNames contains invalid key: "
			     "Syntax error; key: \"a\"");
	keys_case("#a=a;#=b", "", "ExpressionAttributeNames contains invalid "
				  "key: Syntax error; key: \"#\"");
	keys_case("#a-b=a", ":v=1",
	    "ExpressionAttributeNames contains invalid key: Syntax error; "
	    "key: \"#a-b\"");
	keys_case("#a=a", "a=1", "ExpressionAttributeValues contains invalid "
				 "key: Syntax error; key: \"a\"");
	keys_case("#a=a", ":=1", "ExpressionAttributeValues contains invalid "
				 "key: Syntax error; key: \":\"");
	keys_case("#a b=a", "a=1", "ExpressionAttributeNames contains invalid "
				   "key: Syntax error; key: \"#a b\"");
}

Test(expr_parse, unused_placeholders_are_reported_across_expressions)
{
	expr_ctx *ctx;
	expr_cond *c;
	expr_update *u;
	expr_projection *p;
	expr_err err;
	arena a;

	arena_init(&a);
	ctx = ctx_make(&a, "#a=a;#b=b;#c=c", ":v=1;:w=2;:x=3");
	cr_assert_eq(expr_ctx_check_unused(ctx, &err), KV_EINVAL);
	cr_expect_str_eq(err.msg, "Value provided in ExpressionAttributeNames "
				  "unused in expressions: keys: {#a, #b, #c}");
	cr_assert_eq(expr_parse_condition(&a, EXPR_CONDITION, "#a = :v OR "
			 "#b = :w", 18, ctx, &c, &err),
	    KV_OK, "%s", err.msg);
	cr_assert_eq(expr_ctx_check_unused(ctx, &err), KV_EINVAL);
	cr_expect_str_eq(err.msg, "Value provided in ExpressionAttributeNames "
				  "unused in expressions: keys: {#c}");
	cr_assert_eq(expr_parse_projection(&a, "#c", 2, ctx, &p, &err), KV_OK);
	cr_assert_eq(expr_ctx_check_unused(ctx, &err), KV_EINVAL);
	cr_expect_str_eq(err.msg, "Value provided in "
				  "ExpressionAttributeValues unused in "
				  "expressions: keys: {:x}");
	cr_assert_eq(expr_parse_update(&a, "SET z = :x", 10, ctx, &u, &err),
	    KV_OK);
	cr_expect_eq(expr_ctx_check_unused(ctx, &err), KV_OK);
	arena_fini(&a);
}

Test(expr_parse, many_placeholders_use_an_index)
{
	char names[24000], expr[4096], *p = names, *q = expr;
	expr_projection *pr;
	expr_ctx *ctx;
	expr_err err;
	arena a;
	int i;

	arena_init(&a);
	for (i = 0; i < 686; i++) {
		p += sprintf(p, "%s#a%d=attribute%d", i ? ";" : "", i, i);
		q += sprintf(q, "%s#a%d", i ? "," : "", i);
	}
	cr_assert_lt(strlen(expr), 4097);
	ctx = ctx_make(&a, names, "");
	cr_assert_eq(expr_parse_projection(&a, expr, strlen(expr), ctx, &pr,
			 &err),
	    KV_OK, "%s", err.msg);
	cr_expect_eq(pr->n, 686);
	cr_expect_eq(expr_ctx_check_unused(ctx, &err), KV_OK, "%s", err.msg);
	cr_expect_eq(pr->paths[685].elems[0].name_len, strlen("attribute685"));
	cr_expect_eq(memcmp(pr->paths[685].elems[0].name, "attribute685", 12),
	    0);
	cr_assert_eq(expr_parse_projection(&a, "#zz", 3, ctx, &pr, &err),
	    KV_EINVAL);
	arena_fini(&a);
}

Test(expr_parse, trees_are_resolved)
{
	expr_cond *c;
	expr_update *u;
	expr_ctx *ctx;
	expr_err err;
	arena a;
	const char *e = "#n.b[2] = :v AND NOT (size(c) > :v OR d IN (:v, e))";

	arena_init(&a);
	ctx = ctx_make(&a, "#n=a.x", ":v=7;:l=[1]");
	cr_assert_eq(expr_parse_condition(&a, EXPR_FILTER, e, strlen(e), ctx,
			 &c, &err),
	    KV_OK, "%s", err.msg);
	cr_assert_eq(c->kind, EXPR_COND_AND);
	cr_assert_eq(c->nkids, 2);
	cr_assert_eq(c->kids[0]->kind, EXPR_COND_CMP);
	cr_expect_eq(c->kids[0]->cmp, EXPR_EQ);
	cr_assert_eq(c->kids[0]->ops[0].kind, EXPR_OPND_PATH);
	cr_assert_eq(c->kids[0]->ops[0].path.n, 3);
	cr_expect_eq(c->kids[0]->ops[0].path.elems[0].name_len, 3);
	cr_expect_eq(memcmp(c->kids[0]->ops[0].path.elems[0].name, "a.x", 3),
	    0);
	cr_expect_null(c->kids[0]->ops[0].path.elems[2].name);
	cr_expect_eq(c->kids[0]->ops[0].path.elems[2].index, 2);
	cr_expect_eq(c->kids[0]->ops[1].val, ctx->values[0].val);
	cr_assert_eq(c->kids[1]->kind, EXPR_COND_NOT);
	cr_assert_eq(c->kids[1]->kids[0]->kind, EXPR_COND_OR);
	cr_assert_eq(c->kids[1]->kids[0]->kids[0]->ops[0].fn, EXPR_FN_SIZE);
	cr_assert_eq(c->kids[1]->kids[0]->kids[1]->kind, EXPR_COND_IN);
	cr_expect_eq(c->kids[1]->kids[0]->kids[1]->nops, 3);
	e = "SET a = b + :v, c = list_append(if_not_exists(c, :l), :l)";
	cr_assert_eq(expr_parse_update(&a, e, strlen(e), ctx, &u, &err),
	    KV_OK, "%s", err.msg);
	cr_assert_eq(u->n, 2);
	cr_expect_eq(u->actions[0].val->fn, EXPR_FN_PLUS);
	cr_expect_eq(u->actions[1].val->fn, EXPR_FN_LIST_APPEND);
	cr_expect_eq(u->actions[1].val->args[0].fn, EXPR_FN_IF_NOT_EXISTS);
	cr_expect(!u->legacy);
	arena_fini(&a);
}

Test(expr_parse, reserved_words_are_case_insensitive)
{
	static const char *const yes[] = { "status", "STATUS", "Status",
		"abort", "zone", "ZONE", "LocalTimestamp", "inNter",
		"flattern", "size", "and", "ttl", "name" };
	static const char *const no[] = { "", "statu", "statuss", "abortx",
		"a", "zones", "localtimestamps", "attribute_exists",
		"absent" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		cr_expect(expr_reserved(yes[i], strlen(yes[i])), "%s", yes[i]);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		cr_expect(!expr_reserved(no[i], strlen(no[i])), "%s", no[i]);
	cr_expect(expr_reserved("ABORTX", 5));
}

Test(expr_parse, kind_names)
{
	cr_expect_str_eq(expr_kind_name(EXPR_CONDITION),
	    "ConditionExpression");
	cr_expect_str_eq(expr_kind_name(EXPR_FILTER), "FilterExpression");
	cr_expect_str_eq(expr_kind_name(EXPR_KEY_CONDITION),
	    "KeyConditionExpression");
	cr_expect_str_eq(expr_kind_name(EXPR_UPDATE), "UpdateExpression");
	cr_expect_str_eq(expr_kind_name(EXPR_PROJECTION),
	    "ProjectionExpression");
	cr_expect_str_eq(expr_kind_name((expr_kind) 99), "Expression");
}
