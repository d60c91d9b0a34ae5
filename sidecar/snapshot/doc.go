// Package snapshot keeps what a folder held at given moments, cheaply: a content-addressed
// store of git blobs and trees (the same ids git gives the same bytes), shared by every run of a
// workspace, and a walker that hashes only the files whose stamp (inode, size, mtime, ctime)
// changed since its last walk. The run engine snapshots each worker's work/ (and each CLI's
// session store) at the end of every turn, so a run can be forked from any turn with every
// worker's files as they were then (docs/runs.md, Forks).
//
// On disk, .agentcanvas/snapshots/:
//
//	packs/<writer>.pack  the objects' bytes, appended, each once ("blob"/"tree" bodies, raw)
//	packs/<writer>.idx   one line per object: "<id> <b|t> <offset> <size>"
//
// One pack per writer (a run): two runs never append to the same file, so no lock is taken,
// and a reader sees an object once its index line is there (the line follows the bytes). A
// kill in the middle of an append leaves a tail no whole index line names; the writer cuts
// both files back before it appends again. Every read checks the object's id, so a damaged copy
// is reported, never returned.
//
// Why not the apply ledger's pack (sidecar/proposal): the ledger's objects are kept forever
// for reverts and written under the workspace lock, and every apply reads its index whole. A
// snapshot is taken at every turn of every worker, must not wait for an apply, and a
// whole-repository sandbox would add its every file to the index each apply reads. Both stores
// name objects by git blob id, so the same bytes have the same name in both.
package snapshot
