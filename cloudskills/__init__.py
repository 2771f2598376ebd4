"""Cloud Skills: versioned, reviewed, shareable procedures hosted by the collector."""
