// Package job holds the vocabulary that sendloop-go's bulk jobs share: the list sync
// (package listsync), the bulk send (package mailmerge) and Subscribers.ImportAll.
//
// A job reads rows, decides what to do with each, does it, and reports what became of
// every row. Whatever the job, that report speaks the words of this package:
//
//   - a Budget bounds how many rows of a kind a run may end with ("N" rows or "N%" of the
//     rows). Its zero value allows none, so a zero in a Go program and a 0 on the command
//     line mean the same. The defaults a job or the CLI applies are named values
//     (DefaultMaxUnsubscribe, DefaultMaxDrift), never a meaning hidden in the zero value;
//   - a Fate says what became of one row. Its zero value is invalid: a row always has a
//     fate once it is reported;
//   - a Tally counts rows per fate, one Tally per kind of work (the sync's additions,
//     updates and unsubscriptions; the send's messages), and its counts add up to the
//     rows of that kind;
//   - a Progress value names the kind under way and carries its tally so far: every job's
//     OnProgress hook takes one, and every job's OnRow hook takes a row that carries a
//     Fate;
//   - Stop is the one stop model: the end of the call's context means "start no new work";
//     the work in flight then runs for Stop.Grace, or until Stop.Work ends, whichever is
//     first. A command-line tool maps a first Ctrl-C to the first and a second one to the
//     second;
//   - a budget that a finished run exceeds is judged once, inside the job, and returned
//     as a *BudgetError: a program and the CLI give the same verdict.
//
// The package imports nothing but the standard library, so that every job, and the root
// package, can use it.
package job
