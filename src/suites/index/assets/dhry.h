/*
 * hostbench's Dhrystone 2.1: what its two files share, as Dhrystone's dhry.h is shared by
 * dhry_1.c and dhry_2.c: the record, the enumeration, the globals and the procedures.
 */
#ifndef HOSTBENCH_DHRY_H
#define HOSTBENCH_DHRY_H

typedef enum { IDENT_1, IDENT_2, IDENT_3, IDENT_4, IDENT_5 } ident;

struct record {
	struct record *ptr_comp;
	ident discr;
	ident enum_comp;
	int int_comp;
	char str_comp[31];
};

extern struct record *ptr_glob, *next_ptr_glob;
extern int int_glob;
extern int bool_glob;
extern char ch_1_glob, ch_2_glob;
extern int arr_1_glob[50];
extern int arr_2_glob[50][50];

void proc_6(ident val, ident *ref);
void proc_7(int a, int b, int *ref);
void proc_8(int arr_1[50], int arr_2[50][50], int a, int b);
ident func_1(char a, char b);
int func_2(char s1[31], char s2[31]);
int func_3(ident e);

#endif
