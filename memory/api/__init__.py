"""The agent REST API (DRF): one view per operation, nested input/output serializers."""
