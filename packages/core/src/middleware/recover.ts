// stub: replaced by its implementation
export {};
