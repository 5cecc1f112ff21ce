package cudot

// BindingVersion is the version of the cudot library this binding was written for: its API covers
// cudot.h of that version (CUDOT_VERSION_MAJOR.MINOR.PATCH), and scripts/check_versions.sh fails
// when the two differ. The binding loads any library of the same major version (LibraryVersion gives
// the one loaded); an older one refuses what it lacks with an error from the call that needs it.
// The line below is read by that script: keep its exact form.
const BindingVersion = "1.14.0"
