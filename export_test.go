package acpprobe

// AnalysisBudget exposes analysisBudget to the tests.
var AnalysisBudget = analysisBudget
