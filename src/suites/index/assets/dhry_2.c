/*
 * hostbench's Dhrystone 2.1, second file: Proc_6..8 and Func_1..3, the procedures Dhrystone
 * keeps apart from its main loop. Compiled as a translation unit of its own, as UnixBench's
 * Makefile compiles dhry_2.c, so that no call from the main loop is inlined or specialised.
 */
#include <string.h>

#include "dhry.h"

int func_3(ident e)
{
	return e == IDENT_3;
}

void proc_6(ident val, ident *ref)
{
	*ref = val;
	if (!func_3(val))
		*ref = IDENT_4;
	switch (val) {
	case IDENT_1: *ref = IDENT_1; break;
	case IDENT_2: *ref = int_glob > 100 ? IDENT_1 : IDENT_4; break;
	case IDENT_3: *ref = IDENT_2; break;
	case IDENT_4: break;
	case IDENT_5: *ref = IDENT_3; break;
	}
}

void proc_7(int a, int b, int *ref)
{
	int loc = a + 2;
	*ref = b + loc;
}

void proc_8(int arr_1[50], int arr_2[50][50], int a, int b)
{
	int loc = a + 5, index;
	arr_1[loc] = b;
	arr_1[loc + 1] = arr_1[loc];
	arr_1[loc + 30] = loc;
	for (index = loc; index <= loc + 1; ++index)
		arr_2[loc][index] = loc;
	arr_2[loc][loc - 1] += 1;
	arr_2[loc + 20][loc] = arr_1[loc];
	int_glob = 5;
}

ident func_1(char a, char b)
{
	char loc_1 = a, loc_2 = loc_1;
	if (loc_2 != b)
		return IDENT_1;
	ch_1_glob = loc_1;
	return IDENT_2;
}

int func_2(char s1[31], char s2[31])
{
	int loc = 2;
	char ch = 0;
	while (loc <= 2)
		if (func_1(s1[loc], s2[loc + 1]) == IDENT_1) {
			ch = 'A';
			loc += 1;
		}
	if (ch >= 'W' && ch < 'Z')
		loc = 7;
	if (ch == 'R')
		return 1;
	if (strcmp(s1, s2) > 0) {
		loc += 7;
		int_glob = loc;
		return 1;
	}
	return 0;
}
