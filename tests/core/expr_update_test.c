/*
 * expr_update_test.c — tests of update application (core/expr_update.c):
 * every action on every type, every error with DynamoDB's message, list
 * positions that refer to the old list, nested paths, numbers exact to 38
 * digits, nesting limits, ReturnValues paths, and that the old item is
 * never modified.
 *
 * Each table entry is the old item ("none" when it does not exist), the
 * UpdateExpression, its names and values, and the expected new item or
 * the exact error message. Cases come from DynamoDB-verified suites
 * (Alternator's test_update_expression.py, dynalite's updateItem tests).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "expr_test_util.h"

struct ucase {
	char old[128];
	char expr[120];
	char names[32];
	char values[192];
	char want[160];
};

ParameterizedTestParameters(expr_update, table)
{
	static struct ucase cases[] = {
		{ "none", "SET b = :v", "", ":v=4", "{b: 4}" },
		{ "none", "SET x = :v, y = :v", "", ":v=4", "{x: 4, y: 4}" },
		{ "{p: \"k\", a: \"hello\"}", "SET b = a", "", "",
		    "{p: \"k\", a: \"hello\", b: \"hello\"}" },
		{ "{p: \"k\", a: \"hello\"}", "SET c = z", "", "",
		    "The provided expression refers to an attribute that "
		    "does not exist in the item" },
		{ "{p: \"k\", a: \"hello\"}", "SET x = :v, y = x", "", ":v=4",
		    "The provided expression refers to an attribute that "
		    "does not exist in the item" },
		{ "{p: \"k\", a: \"hello\"}", "SET a = a", "", "",
		    "{p: \"k\", a: \"hello\"}" },
		{ "{p: \"k\", a: \"hello\"}", "SET z = z", "", "",
		    "The provided expression refers to an attribute that "
		    "does not exist in the item" },
		{ "{p: \"k\", a: \"hello\"}", "SET #one = #two",
		    "#one=c;#two=a", "",
		    "{p: \"k\", a: \"hello\", c: \"hello\"}" },
		{ "{a: 1, b: 2}", "SET a = b, b = a", "", "", "{a: 2, b: 1}" },
		{ "{a: \"hello\", b: \"hi\"}", "REMOVE a", "", "",
		    "{b: \"hi\"}" },
		{ "{a: \"hello\", b: \"hi\"}", "REMOVE c", "", "",
		    "{a: \"hello\", b: \"hi\"}" },
		{ "{a: \"hello\", b: \"hi\"}", "REMOVE a, b", "", "", "{}" },
		{ "none", "REMOVE a", "", "", "{}" },
		{ "none", "REMOVE x.y, z[0]", "", "", "{}" },
		{ "none", "REMOVE x.y SET a = :v", "", ":v=1", "{a: 1}" },
		{ "{p: \"k\", a: \"hello\"}", "REMOVE a SET b = a", "", "",
		    "{p: \"k\", b: \"hello\"}" },
		{ "{p: \"k\", a: \"hello\"}", "SET c = a REMOVE a", "", "",
		    "{p: \"k\", c: \"hello\"}" },
		{ "none", "SET b = :a + :b", "", ":a=4;:b=3", "{b: 7}" },
		{ "none", "SET b = :a - :b", "", ":a=5;:b=2", "{b: 3}" },
		{ "{a: 2}", "SET a = a + :v", "", ":v=3", "{a: 5}" },
		{ "{a: 2}", "SET a = :v + a", "", ":v=4", "{a: 6}" },
		{ "{a: 2}", "SET b = :v + a", "", ":v=1", "{a: 2, b: 3}" },
		{ "{a: 2, b: 10}", "SET a = b + a", "", "", "{a: 12, b: 10}" },
		{ "{a: 2, b: 10}", "SET a = b - a", "", "", "{a: 8, b: 10}" },
		{ "{n: 2}", "SET nn = :seven - n", "", ":seven=7",
		    "{n: 2, nn: 5}" },
		{ "none", "SET b = :a + :b", "",
		    ":a=1;:b=10000000000000000000000",
		    "{b: 10000000000000000000001}" },
		{ "none", "SET b = :b - :a", "",
		    ":a=1;:b=10000000000000000000000",
		    "{b: 9999999999999999999999}" },
		{ "none", "SET b = :a + :b", "", ":a=9e125;:b=9e125",
		    "Number overflow. Attempting to store a number with m"
		    "agnitude larger than supported range" },
		{ "none", "SET b = :a - :b", "", ":a=9e125;:b=-9e125",
		    "Number overflow. Attempting to store a number with m"
		    "agnitude larger than supported range" },
		{ "none", "SET b = :a + :b", "", ":a=1e50;:b=1",
		    "Number overflow. Attempting to store a number with m"
		    "agnitude larger than supported range" },
		{ "none", "SET b = :a - :b", "", ":a=1e50;:b=1",
		    "Number overflow. Attempting to store a number with m"
		    "agnitude larger than supported range" },
		{ "none", "SET b = :a - :b", "", ":a=2e-130;:b=1.5e-130",
		    "Number underflow. Attempting to store a number with "
		    "magnitude smaller than supported range" },
		{ "none", "SET b = :a + :b", "", ":a=1e-130;:b=-1.5e-130",
		    "Number underflow. Attempting to store a number with "
		    "magnitude smaller than supported range" },
		{ "none", "SET b = :a + :b", "", ":a=-5;:b=5", "{b: 0}" },
		{ "none", "SET b = :a + :b", "", ":a=0.1;:b=0.2", "{b: 0.3}" },
		{ "none", "SET b = :a - :b", "", ":a=0.1;:b=0.2",
		    "{b: -0.1}" },
		{ "none", "SET b = :a + :b", "", ":a=9e124;:b=1e124",
		    "{b: 1e125}" },
		{ "none", "SET b = :a + :b", "",
		    ":a=9.9999999999999999999999999999999999998e125;:b=0."
		    "0000000000000000000000000000000000001e125",
		    "{b: 9.9999999999999999999999999999999999999e125}" },
		{ "none", "SET b = :a + :b", "",
		    ":a=12345678901234567890123456789012345677;:b=1",
		    "{b: 12345678901234567890123456789012345678}" },
		{ "none", "SET b = :a + :b", "",
		    ":a=12345678901234567890123456789012345678;:b=0.1",
		    "Number overflow. Attempting to store a number with m"
		    "agnitude larger than supported range" },
		{ "none", "SET b = :a - :b", "", ":a=2e-130;:b=1e-130",
		    "{b: 1e-130}" },
		{ "{a: \"x\"}", "SET b = a + :v", "", ":v=1",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "{a: \"x\"}", "SET b = :v - a", "", ":v=1",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "{a: \"x\"}", "SET b = c + a", "", "",
		    "The provided expression refers to an attribute that "
		    "does not exist in the item" },
		{ "{a: \"x\"}", "SET b = a + c", "", "",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "{a: 1}", "SET b = a + c", "", "",
		    "The provided expression refers to an attribute that "
		    "does not exist in the item" },
		{ "{a: [1]}", "SET b = a + :v", "", ":v=1",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "none", "SET a = list_append(:a, :b)", "",
		    ":a=[4, \"hello\"];:b=[\"hi\", 7]",
		    "{a: [4, \"hello\", \"hi\", 7]}" },
		{ "{a: [\"hi\", 2]}", "SET a = list_append(a, :v)", "",
		    ":v=[4, \"hello\"]", "{a: [\"hi\", 2, 4, \"hello\"]}" },
		{ "{a: [\"hi\", 2]}", "SET a = list_append(:v, a)", "",
		    ":v=[\"dog\"]", "{a: [\"dog\", \"hi\", 2]}" },
		{ "{a: [\"hi\", 2]}", "SET b = list_append(a, :v)", "",
		    ":v=[\"cat\"]",
		    "{a: [\"hi\", 2], b: [\"hi\", 2, \"cat\"]}" },
		{ "{a: [\"hi\", 2]}", "SET c = list_append(a, a)", "", "",
		    "{a: [\"hi\", 2], c: [\"hi\", 2, \"hi\", 2]}" },
		{ "{a: [\"hi\", 2]}", "SET c = list_append(a, b)", "", "",
		    "The provided expression refers to an attribute that "
		    "does not exist in the item" },
		{ "{a: [\"hi\", 2]}", "SET c = list_append(b, a)", "", "",
		    "The provided expression refers to an attribute that "
		    "does not exist in the item" },
		{ "{a: \"x\"}", "SET c = list_append(a, :l)", "", ":l=[1]",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "{a: \"x\"}", "SET c = list_append(:l, a)", "", ":l=[1]",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "{a: SS(\"x\")}", "SET c = list_append(:l, a)", "", ":l=[1]",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "none", "SET a = list_append(:e, :e)", "", ":e=[]",
		    "{a: []}" },
		{ "none", "SET a = if_not_exists(a, :v)", "", ":v=2",
		    "{a: 2}" },
		{ "{a: 2}", "SET a = if_not_exists(a, :v)", "", ":v=3",
		    "{a: 2}" },
		{ "{a: 2}", "SET b = if_not_exists(c, :v)", "", ":v=4",
		    "{a: 2, b: 4}" },
		{ "{a: 2}", "SET b = if_not_exists(a, :v)", "", ":v=6",
		    "{a: 2, b: 2}" },
		{ "{a: 2}", "SET b = if_not_exists(c, d)", "", "",
		    "The provided expression refers to an attribute that "
		    "does not exist in the item" },
		{ "{a: 2}", "SET b = if_not_exists(c, a)", "", "",
		    "{a: 2, b: 2}" },
		{ "{a: {b: 1}}", "SET c = if_not_exists(a.b, :v)", "", ":v=9",
		    "{a: {b: 1}, c: 1}" },
		{ "{a: {b: 1}}", "SET c = if_not_exists(a.x, :v)", "", ":v=9",
		    "{a: {b: 1}, c: 9}" },
		{ "none", "SET b = if_not_exists(b, :v)+:w", "", ":v=2;:w=3",
		    "{b: 5}" },
		{ "{b: 10}", "SET b = if_not_exists(b, :v)+:w", "",
		    ":v=2;:w=3", "{b: 13}" },
		{ "none", "SET a = list_append(if_not_exists(a, :e), :l)", "",
		    ":e=[];:l=[\"x\"]", "{a: [\"x\"]}" },
		{ "{a: [1]}", "SET a = list_append(if_not_exists(a, :e), :l)",
		    "", ":e=[];:l=[\"x\"]", "{a: [1, \"x\"]}" },
		{ "{a: 1}", "SET a = if_not_exists(a, if_not_exists(b, :v))",
		    "", ":v=5", "{a: 1}" },
		{ "none", "SET a = if_not_exists(a, if_not_exists(b, :v))", "",
		    ":v=5", "{a: 5}" },
		{ "{a: 3, b: \"hi\"}", "ADD a :v", "", ":v=4",
		    "{a: 7, b: \"hi\"}" },
		{ "{a: 3, b: \"hi\"}", "ADD b :v", "", ":v=1",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "{a: 3, b: \"hi\"}", "ADD c :v", "", ":v=7",
		    "{a: 3, b: \"hi\", c: 7}" },
		{ "none", "ADD b :v", "", ":v=8", "{b: 8}" },
		{ "{a: -2.5}", "ADD a :v", "", ":v=2.5", "{a: 0}" },
		{ "{a: 9e125}", "ADD a :v", "", ":v=9e125",
		    "Number overflow. Attempting to store a number with m"
		    "agnitude larger than supported range" },
		{ "{a: SS(\"dog\", \"cat\", \"mouse\")}", "ADD a :v", "",
		    ":v=SS(\"pig\")",
		    "{a: SS(\"dog\", \"cat\", \"mouse\", \"pig\")}" },
		{ "{a: SS(\"beaver\", \"lynx\", \"coati\")}", "ADD a :v", "",
		    ":v=SS(\"coati\", \"beaver\", \"badger\")",
		    "{a: SS(\"beaver\", \"badger\", \"lynx\", \"coati\")}" },
		{ "{a: NS(1, 2)}", "ADD a :v", "", ":v=NS(2.0, 3)",
		    "{a: NS(1, 2, 3)}" },
		{ "{a: BS(b\"x\")}", "ADD a :v", "", ":v=BS(b\"y\", b\"x\")",
		    "{a: BS(b\"x\", b\"y\")}" },
		{ "{a: NS(1)}", "ADD a :v", "", ":v=SS(\"1\")",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "{a: \"s\"}", "ADD a :v", "", ":v=SS(\"1\")",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "{a: SS(\"x\")}", "ADD a :v", "", ":v=1",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "{a: [1]}", "ADD a :v", "", ":v=NS(1)",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "{a: \"hello\"}", "ADD b :v", "", ":v=SS(\"dog\")",
		    "{a: \"hello\", b: SS(\"dog\")}" },
		{ "none", "ADD b :v", "", ":v=SS(\"cat\")",
		    "{b: SS(\"cat\")}" },
		{ "{a: SS(\"dog\", \"cat\", \"mouse\"), b: \"hi\"}",
		    "DELETE a :v", "", ":v=SS(\"cat\", \"mouse\")",
		    "{a: SS(\"dog\"), b: \"hi\"}" },
		{ "{a: SS(\"dog\", \"cat\", \"mouse\"), b: \"hi\"}",
		    "DELETE a :v", "", ":v=SS(\"pig\")",
		    "{a: SS(\"dog\", \"cat\", \"mouse\"), b: \"hi\"}" },
		{ "{a: SS(\"dog\", \"cat\", \"mouse\"), b: \"hi\"}",
		    "DELETE a :v", "", ":v=SS(\"dog\", \"cat\", \"mouse\")",
		    "{b: \"hi\"}" },
		{ "{a: SS(\"dog\", \"cat\", \"mouse\"), b: \"hi\"}",
		    "DELETE c :v", "", ":v=SS(\"dog\")",
		    "{a: SS(\"dog\", \"cat\", \"mouse\"), b: \"hi\"}" },
		{ "{a: SS(\"dog\", \"cat\", \"mouse\"), b: \"hi\"}",
		    "DELETE b :v", "", ":v=SS(\"h\")",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "{a: SS(\"dog\", \"cat\", \"mouse\"), b: \"hi\"}",
		    "DELETE a :v", "", ":v=NS(1)",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "{a: NS(1, 2, 3)}", "DELETE a :v", "", ":v=NS(2.0)",
		    "{a: NS(1, 3)}" },
		{ "none", "DELETE a :v", "", ":v=SS(\"x\")", "{}" },
		{ "{a: {b: 3, c: 4}, d: 5}", "SET a.c = :v", "", ":v=7",
		    "{a: {b: 3, c: 7}, d: 5}" },
		{ "{a: {b: 3, c: 4}, d: 5}", "SET a.d = :v", "", ":v=3",
		    "{a: {b: 3, c: 4, d: 3}, d: 5}" },
		{ "{a: {b: 3, c: {one: 1}}}", "SET a.c = :v", "", ":v=7",
		    "{a: {b: 3, c: 7}}" },
		{ "{a: {b: 3, c: {x: 7, y: 8}}, d: 5}", "SET z = a.c.x", "",
		    "", "{a: {b: 3, c: {x: 7, y: 8}}, d: 5, z: 7}" },
		{ "{p: \"k\"}", "SET #a = :v", "#a=a.b", ":v=3",
		    "{p: \"k\", \"a.b\": 3}" },
		{ "{a: [\"one\", \"two\", \"three\"]}", "SET a[1] = :v", "",
		    ":v=\"hello\"", "{a: [\"one\", \"hello\", \"three\"]}" },
		{ "{a: [\"one\", \"two\", \"three\"]}", "SET a[7] = :v", "",
		    ":v=\"hello\"",
		    "{a: [\"one\", \"two\", \"three\", \"hello\"]}" },
		{ "{a: [\"one\", \"two\", \"three\", \"hello\"]}",
		    "SET a[84] = :a1, a[37] = :a2, a[17] = :a3, a[50] = :"
		    "a4", "", ":a1=\"a1\";:a2=\"a2\";:a3=\"a3\";:a4=\"a4\"",
		    "{a: [\"one\", \"two\", \"three\", \"hello\", \"a3\","
		    " \"a2\", \"a4\", \"a1\"]}" },
		{ "{a: {b: 3, c: [\"hi\", {x: {y: [3, 5, 7]}}]}}",
		    "SET a.c[1].#name.y[1] = :v", "#name=x", ":v=9",
		    "{a: {b: 3, c: [\"hi\", {x: {y: [3, 9, 7]}}]}}" },
		{ "{a: {b: 3, c: [\"hi\", {x: {y: [3, 5, 7]}}]}}",
		    "SET a.z = a.c[1].#name.y[1]", "#name=x", "",
		    "{a: {b: 3, z: 5, c: [\"hi\", {x: {y: [3, 5, 7]}}]}}" },
		{ "{a: {b: 3, c: [\"hi\", {x: {y: [3, 5, 7]}, q: 2}]}}",
		    "REMOVE a.c[1].x.y[1], a.c[1].q", "", "",
		    "{a: {b: 3, c: [\"hi\", {x: {y: [3, 7]}}]}}" },
		{ "{a: [4, 5, 6]}", "REMOVE a[17]", "", "", "{a: [4, 5, 6]}" },
		{ "{a: [2, 3, 4, 5, 6, 7]}", "REMOVE a[1] SET a[3] = :v", "",
		    ":v=17", "{a: [2, 4, 17, 6, 7]}" },
		{ "{a: [2, 3, 4, 5, 6, 7]}", "SET a[3] = :v REMOVE a[1]", "",
		    ":v=17", "{a: [2, 4, 17, 6, 7]}" },
		{ "{a: [0, 1, 2, 3]}", "REMOVE a[1], a[2]", "", "",
		    "{a: [0, 3]}" },
		{ "{a: [0, 1, 2, 3]}", "REMOVE a[2], a[1], a[0], a[3]", "", "",
		    "{a: []}" },
		{ "{a: [0, 1, 2, 3]}",
		    "REMOVE a[3], a[9] SET a[5] = :v, a[0] = :v", "",
		    ":v=\"x\"", "{a: [\"x\", 1, 2, \"x\"]}" },
		{ "{a: {b: 1}}", "REMOVE a.b", "", "", "{a: {}}" },
		{ "{a: [1]}", "REMOVE a[0]", "", "", "{a: []}" },
		{ "{a: [1, SS(\"x\")]}", "ADD a[1] :v, a[5] :w DELETE a[0] :s",
		    "", ":v=SS(\"y\");:w=1;:s=NS(1)",
		    "An operand in the update expression has an incorrect"
		    " data type" },
		{ "{a: [1, SS(\"x\")]}", "ADD a[1] :v, a[5] :w DELETE a[7] :s",
		    "", ":v=SS(\"y\");:w=2;:s=NS(1)",
		    "{a: [1, SS(\"x\", \"y\"), 2]}" },
		{ "{a: [1, SS(\"x\")]}", "DELETE a[1] :v", "", ":v=SS(\"x\")",
		    "{a: [1]}" },
		{ "{m: {}}", "ADD m.c :n", "", ":n=1", "{m: {c: 1}}" },
		{ "{m: {}}", "ADD y.c :n", "", ":n=1",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "SET a.c = :v", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "SET b.c = :v", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "SET c.c = :v", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "REMOVE a.c", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "REMOVE b.c", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "REMOVE c.c", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "SET a[0] = :v", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "SET c[0] = :v", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "REMOVE a[0]", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "REMOVE c[0]", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "SET b[0].x = :v", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "SET b[3].x = :v", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "SET b[3][0] = :v", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "ADD a.c :v", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "DELETE a.c :s", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"hello\", b: [\"hi\"]}", "ADD c.c :v", "",
		    ":v=1;:s=SS(\"x\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "none", "SET c.c = :v", "", ":v=1",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "none", "SET b[0] = :v", "", ":v=1",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "none", "SET b.a = a", "", ":v=1",
		    "The provided expression refers to an attribute that "
		    "does not exist in the item" },
		{ "none", "ADD y.a :v", "", ":v=1",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "none", "SET b.a = :v", "", ":v=1",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "set b.a = :a, #1 = :a", "#1=1", ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "set b[1] = :a, #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "set y.a = :a, #1 = :a", "#1=1", ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "set y[1] = :a, #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "set c[1] = :a, #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "set d.#1 = :a", "#1=1", ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "remove b.a set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "remove b[1] set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "remove y.a set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "remove y[1] set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "remove c[1] set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "remove d.#1 set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "delete b.a :a set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "delete b[1] :a set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "delete y.a :a set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "delete y[1] :a set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "delete c[1] :a set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "delete d.#1 :a", "#1=1", ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "add b.a :a set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "add b[1] :a set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "add y.a :a set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "add y[1] :a set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "add c[1] :a set #1 = :a", "#1=1",
		    ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"k\", b: \"k\", c: {\"1\": \"a\"}, d: [\"a\", "
		    "\"b\"]}", "add d.#1 :a", "#1=1", ":a=SS(\"a\")",
		    "The document path provided in the update expression "
		    "is invalid for update" },
		{ "{a: \"x\", b: {a: 1, b: 2, c: 3}, c: [1, 3]}",
		    "set b.c=((c[1])+(b.a)),b.a = a,c[1] = a, c[4] = b.a "
		    "- b.b, c[2] = b.c add c[8] :b, c[6] :a", "",
		    ":a=2;:b=SS(\"a\")",
		    "{a: \"x\", b: {a: \"x\", b: 2, c: 4}, c: [1, \"x\", "
		    "3, -1, 2, SS(\"a\")]}" },
		{ "none", "REMOVE b DELETE c :c ADD d :d, e :e SET f = :f", "",
		    ":c=SS(\"a\", \"b\");:d=5;:e=SS(\"a\", \"b\");:f=[\"a"
		    "\", 1]", "{d: 5, e: SS(\"a\", \"b\"), f: [\"a\", 1]}" },
		{ "none", "ADD #e :e,#d :d DELETE #c :c REMOVE #b SET #f = :f",
		    "#b=b;#c=c;#d=d;#e=e;#f=f",
		    ":c=SS(\"a\", \"b\");:d=5;:e=SS(\"a\", \"b\");:f=[\"a"
		    "\", 1]", "{d: 5, e: SS(\"a\", \"b\"), f: [\"a\", 1]}" },
		{ "none", "SET d = :v1, e = :v2, f = :v3, g = :v4", "",
		    ":v1=[];:v2={};:v3=\"\";:v4=b\"\"",
		    "{d: [], e: {}, f: \"\", g: b\"\"}" },
		{ "{a: 1}", "SET a = :v", "", ":v={x: [1]}", "{a: {x: [1]}}" },
		{ "{a: {b: [1]}}", "SET a.b[0] = a", "", "",
		    "{a: {b: [{b: [1]}]}}" },
		{ "{a: {b: 1}}", "SET c.d = :v, e = absent", "", ":v=1",
		    "The provided expression refers to an attribute that "
		    "does not exist in the item" },
		{ "{a: 1, b: 2, c: 3}", "REMOVE b", "", "", "{a: 1, c: 3}" },
		{ "{a: 1, b: 2, c: 3}", "SET b = :v", "", ":v=9",
		    "{a: 1, b: 9, c: 3}" },
		{ "{x: {}}", "SET x.y = :v", "",
		    ":v=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]"
		    "]]]]]]]]]]]]]]]",
		    "{x: {y: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]"
		    "]]]]]]]]]]]]]]]]]]]]}}" },
		{ "{x: {}}", "SET x.y = :v", "",
		    ":v=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]"
		    "]]]]]]]]]]]]]]]]]",
		    "Nesting Levels have exceeded supported limits: Attri"
		    "butes in the item have nested levels beyond supporte"
		    "d limit" },
		{ "none", "SET a = :v", "",
		    ":v=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]"
		    "]]]]]]]]]]]]]]]",
		    "{a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]"
		    "]]]]]]]]]]]]]]]]}" },
		{ "{x: {a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]"
		    "]]]]]]]]]]]]]]]]]]}, y: {z: {}}}", "SET y.z.w = x.a", "",
		    "", "{x: {a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]"
		    "]]]]]]]]]]]]]]]]]]}, y: {z: {w: [[[[[[[[[[[[[[[[[[[["
		    "[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}}" },
		{ "{x: {a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]"
		    "]]]]]]]]]]]]]]]]]]]]}, y: {z: {}}}", "SET y.z.w = x.a",
		    "", "",
		    "Nesting Levels have exceeded supported limits: Attri"
		    "butes in the item have nested levels beyond supporte"
		    "d limit" },
		{ "none", "SET a = list_append(:v, :v)", "",
		    ":v=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]"
		    "]]]]]]]]]]]]]]]",
		    "{a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]"
		    "]]]]]]]]]]]]]]], [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]"
		    "]]]]]]]]]]]]]]]]]]]]]]]]]]]]}" },
	};

	return cr_make_param_array(
	    struct ucase, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct ucase *c, expr_update, table)
{
	value old, *oldp = NULL, got;
	expr_update *u;
	expr_ctx *ctx;
	expr_err err;
	arena a;
	kv_err e;

	arena_init(&a);
	if (strcmp(c->old, "none") != 0) {
		old = V(&a, c->old);
		oldp = &old;
	}
	ctx = ctx_make(&a, c->names, c->values);
	e = expr_parse_update(&a, c->expr, strlen(c->expr), ctx, &u, &err);
	cr_assert_eq(e, KV_OK, "parse \"%s\": %s", c->expr, err.msg);
	err.msg[0] = '\0';
	e = expr_apply_update(&a, u, oldp, &got, &err);
	if (c->want[0] == '{') {
		value want = V(&a, c->want);

		cr_assert_eq(e, KV_OK, "\"%s\": %s", c->expr, err.msg);
		cr_expect(value_equal(&got, &want),
		    "\"%s\" on %s:\n got %s\nwant %s", c->expr, c->old,
		    vstr(&a, &got), c->want);
	} else {
		cr_expect_eq(e, KV_EINVAL, "\"%s\" on %s: %s", c->expr, c->old,
		    kv_err_name(e));
		cr_expect_str_eq(err.msg, c->want, "\"%s\" on %s:\n got %s",
		    c->expr, c->old, err.msg);
	}
	if (oldp != NULL) {
		value again = V(&a, c->old);

		cr_expect(value_equal(oldp, &again),
		    "\"%s\" modified the old item", c->expr);
	}
	arena_fini(&a);
}

/* ---- scale -------------------------------------------------------------- */

/* big_set makes a string set of n members "p<i>" for i in [from, from+n). */
static value
big_set(arena *a, const char *p, size_t from, size_t n)
{
	value v = { .type = VAL_SS, .len = n };
	size_t i;

	v.u.elems = arena_alloc(a, n * sizeof(value));
	for (i = 0; i < n; i++) {
		char buf[32];
		int len = snprintf(buf, sizeof(buf), "%s%zu", p, from + i);

		v.u.elems[i].type = VAL_S;
		v.u.elems[i].u.bytes = arena_dup(a, buf, (size_t) len);
		v.u.elems[i].len = (size_t) len;
	}
	return v;
}

Test(expr_update, big_sets_merge_in_n_log_n)
{
	value old = { .type = VAL_M, .len = 1 }, got, add, del;
	expr_value vals[2];
	expr_update *u;
	expr_ctx ctx;
	expr_err err;
	attr at;
	arena a;

	arena_init(&a);
	at.name = "s";
	at.name_len = 1;
	at.v = big_set(&a, "m", 0, 50000);
	old.u.attrs = &at;
	add = big_set(&a, "m", 25000, 50000);
	del = big_set(&a, "m", 0, 60000);
	vals[0] = (expr_value){ .key = ":a", .key_len = 2, .val = &add };
	vals[1] = (expr_value){ .key = ":d", .key_len = 2, .val = &del };
	expr_ctx_init(&ctx, NULL, 0, vals, 2);
	cr_assert_eq(expr_parse_update(&a, "ADD s :a", 8, &ctx, &u, &err),
	    KV_OK);
	cr_assert_eq(expr_apply_update(&a, u, &old, &got, &err), KV_OK);
	cr_assert_eq(got.u.attrs[0].v.len, 75000);
	old = got;
	cr_assert_eq(expr_parse_update(&a, "DELETE s :d", 11, &ctx, &u, &err),
	    KV_OK);
	cr_assert_eq(expr_apply_update(&a, u, &old, &got, &err), KV_OK);
	cr_assert_eq(got.u.attrs[0].v.len, 15000);
	arena_fini(&a);
}

Test(expr_update, big_strings_search_in_linear_time)
{
	size_t n = 400 * 1024;
	char *hay, *needle;
	value item = { .type = VAL_M, .len = 1 }, nv;
	expr_value vals[1];
	expr_cond *c;
	expr_ctx ctx;
	expr_err err;
	attr at;
	arena a;

	arena_init(&a);
	hay = arena_alloc(&a, n);
	needle = arena_alloc(&a, n / 2);
	memset(hay, 'a', n);
	memset(needle, 'a', n / 2);
	needle[n / 2 - 1] = 'b';
	at.name = "s";
	at.name_len = 1;
	at.v = (value){ .type = VAL_S, .len = n };
	at.v.u.bytes = hay;
	item.u.attrs = &at;
	nv = (value){ .type = VAL_S, .len = n / 2 };
	nv.u.bytes = needle;
	vals[0] = (expr_value){ .key = ":v", .key_len = 2, .val = &nv };
	expr_ctx_init(&ctx, NULL, 0, vals, 1);
	cr_assert_eq(expr_parse_condition(&a, EXPR_CONDITION,
			 "contains(s, :v)", 15, &ctx, &c, &err),
	    KV_OK);
	cr_expect(!expr_eval_condition(c, &item));
	hay[n - 1] = 'b';
	cr_expect(expr_eval_condition(c, &item));
	arena_fini(&a);
}
