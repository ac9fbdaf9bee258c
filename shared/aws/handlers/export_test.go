package handlers

// TemplateResources is templateResources for the package's external
// tests (the in-process AWS home's pump reads the event batching).
var TemplateResources = templateResources
