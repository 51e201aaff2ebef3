function c = addtwo(a, b)
% ADDTWO Add two numbers.
%
% Arguments:
%     a: The first number.
%     b: The second number.
%
% Returns:
%     c: The sum.
    c = a + b;
end
